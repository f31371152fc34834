/**
 * E-mail addresses match with their ASCII letters in any case and every other character as it is, on both
 * engines alike (storage/dialect.ts's `foldedEmail`): `Alice@…` and `alice@…` are one address, `Ärger@…` and
 * `ärger@…` two. PostgreSQL's own `lower` follows the database's collation and folds `Ä` too (it did: a 409
 * where SQLite answered 201); SQLite's folds ASCII alone.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../../../src/main/storage/connections'
import { engineOf } from '../../../src/main/storage/dialect'
import { findInvitationByEmail } from '../../../src/main/storage/repositories/invitations.repository'
import { statementsRun, withVaultFile } from '../../helpers/database'
import { addMember, invitationLink, linkToken } from '../../helpers/invitations'
import { startTestService, type TestService } from '../../helpers/service'

describe('e-mail addresses match ignoring the case of ASCII letters only', () => {
  let service: TestService

  beforeAll(async () => {
    service = await startTestService()
  })
  afterAll(() => service.stop())

  const invite = (email: string) => service.request('POST', '/tenants/self/invitations', { body: { email } })

  it('Ärger@… and ärger@… are two invitations', async () => {
    const first = await invite('Ärger@example.com')
    expect(first.status).toBe(201)
    const second = await invite('ärger@example.com')
    expect(second.status, JSON.stringify(second.body)).toBe(201)
    expect(second.body.email).toBe('ärger@example.com')
    expect(second.body.id).not.toBe(first.body.id)
  })

  it('Alice@… and alice@… are one invitation (409), and so are addresses differing in more ASCII letters beside a non-ASCII one', async () => {
    expect((await invite('Alice@example.com')).status).toBe(201)
    const again = await invite('alice@example.com')
    expect(again.status).toBe(409)
    expect(again.body.detail).toBe('An invitation for this e-mail address already exists; resend it instead.')
    expect((await invite('Zoë.Smith@Example.com')).status).toBe(201)
    expect((await invite('zoë.smith@EXAMPLE.COM')).status).toBe(409)
    expect((await invite('ZOË.SMITH@example.com')).status).toBe(201)
  })

  it('a member Öffner@… does not hold öffner@…, which becomes a member of its own; ÖFFNER@… is the member', async () => {
    const member = await addMember(service, 'Öffner@example.com')
    const upper = await invite('ÖFFNER@example.com')
    expect(upper.status).toBe(409)
    expect(upper.body.detail).toBe('This e-mail address already belongs to a member of the tenant.')
    const lower = await invite('öffner@example.com')
    expect(lower.status, JSON.stringify(lower.body)).toBe(201)
    // Accepting it finds no user of that address: a new user, a second member.
    const token = linkToken(await invitationLink(service, lower.body.id))
    const accepted = await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: 'Otto', last_name: 'Öffner' } })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201)
    expect(accepted.body.user.id).not.toBe(member.user.id)
    expect(accepted.body.user.email).toBe('öffner@example.com')
  })

  it('an accepting address reuses the user of the same address in another ASCII case', async () => {
    const member = await addMember(service, 'Grace.Hopper@example.com', 'Grace', 'Hopper')
    const other = await service.request('DELETE', `/tenants/self/members/${member.id}`)
    expect(other.status).toBe(204)
    const again = await addMember(service, 'grace.hopper@EXAMPLE.com', 'Grace', 'Hopper')
    expect(again.user.id).toBe(member.user.id)
  })

  it("the database's unique index holds the same rule: one row per address so folded, whatever the service checked", async () => {
    const row = (email: string) => ({
      id: randomUUID(),
      tenant_id: service.tenantId,
      email,
      status: 'PENDING',
      link_hash: null,
      expires_at: service.clock.now() + 60_000,
      created_by: null,
      created_at: service.clock.now()
    })
    await withVaultFile(service.dataDir, async (db) => {
      await db('invitations').insert(row('Übel@example.com'))
      await db('invitations').insert(row('übel@example.com'))
      await db('invitations').insert(row('Bob@example.com'))
      await expect(db('invitations').insert(row('bob@example.com'))).rejects.toThrow(/unique|UNIQUE/)
    })
  })

  it('the lookup of an invitation by address searches that unique index', async () => {
    const reader = sql(service.host.vault.db.reader)
    const [statement] = await statementsRun(reader, () => findInvitationByEmail(service.host.vault.db.reader, service.tenantId, 'ALICE@example.com'))
    if (engineOf(reader) === 'sqlite') {
      const plan: { detail: string }[] = await reader.raw(`EXPLAIN QUERY PLAN ${statement.sql}`, statement.bindings)
      expect(plan.map((step) => step.detail)).toEqual([expect.stringContaining('USING INDEX invitations_tenant_email_unique (tenant_id=? AND <expr>=?)')])
    } else {
      // The table is tiny: without sequential scans, the plan shows which index the query can use.
      const plan = await reader.transaction(async (trx) => {
        await trx.raw('SET LOCAL enable_seqscan = off')
        return (await trx.raw(`EXPLAIN ${statement.sql.replace(/\$\d+/g, '?')}`, statement.bindings)).rows.map((step: { 'QUERY PLAN': string }) => step['QUERY PLAN']).join('\n')
      })
      expect(plan).toMatch(/Index Scan using invitations_tenant_email_unique/)
      expect(plan).toMatch(/Index Cond: .*tenant_id = .* AND \(lower\(/)
    }
  })
})
