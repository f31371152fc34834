/**
 * Two service instances in one process on one PostgreSQL database, as behind a load
 * balancer, sharing a test clock so their sweeps fall due together: each sweep runs
 * once, each expiry is logged once, each mail is sent once. (The races between
 * requests are in test/team/races.test.ts, through two `tessera serve`s.)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex from 'knex'
import { afterEach, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../src/main/crypto/keys'
import { readySodium } from '../../src/main/crypto/sodium'
import { silentLogger } from '../../src/main/infra/logger'
import type { MailConfig } from '../../src/main/infra/mail-transport'
import { startServiceHost, type ServiceHost } from '../../src/main/bootstrap/service-host'
import { initVault } from '../../src/main/bootstrap/vault'
import { SWEEP_LEASE_MS, type SweepResult } from '../../src/main/app/jobs.service'
import { TestClock } from '../helpers/clock'
import { createTestDatabase } from '../helpers/postgres'
import { reservePort, startSmtpServer, type TestSmtpServer } from '../helpers/smtp'

const MINUTE = 60_000

interface Instances {
  databaseUrl: string
  clock: TestClock
  adminKey: string
  hosts: [ServiceHost, ServiceHost]
  request(host: ServiceHost, method: string, path: string, options?: { key?: string; body?: unknown }): Promise<{ status: number; body: any }>
  stop(): Promise<void>
}

/** A team vault and two instances serving it, each with a data directory of its own (the master key is passed to both). */
async function startTwoInstances(mail?: MailConfig): Promise<Instances> {
  await readySodium()
  const database = await createTestDatabase()
  const masterKey = generateMasterKey()
  const clock = new TestClock()
  const dirs = await Promise.all([1, 2].map(() => mkdtemp(join(tmpdir(), 'tessera-instance-'))))
  const init = await initVault({ dataDir: dirs[0], databaseUrl: database.url, masterKey, tenantName: 'Team', ownerEmail: 'owner@example.com', clock })
  const hosts: ServiceHost[] = []
  for (const dataDir of dirs) {
    hosts.push(await startServiceHost({ dataDir, databaseUrl: database.url, masterKey, host: '127.0.0.1', port: 0, logger: silentLogger(), clock, mail, jobTickMs: 0 }))
  }
  return {
    databaseUrl: database.url,
    clock,
    adminKey: init.application.key,
    hosts: hosts as [ServiceHost, ServiceHost],
    async request(host, method, path, { key = init.application.key, body } = {}) {
      const headers: Record<string, string> = { 'svc-api-key': key }
      if (body !== undefined) headers['content-type'] = 'application/json'
      const response = await fetch(host.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await response.text()
      return { status: response.status, body: text ? JSON.parse(text) : undefined }
    },
    async stop() {
      for (const host of hosts) await host.stop()
      for (const dir of dirs) await rm(dir, { recursive: true, force: true })
      await database.drop()
    }
  }
}

describe('two instances on one PostgreSQL database', () => {
  let instances: Instances | undefined
  let smtp: TestSmtpServer | undefined

  afterEach(async () => {
    await instances?.stop()
    await smtp?.close()
    instances = undefined
    smtp = undefined
  })

  /** Entries of `entityType` with `operation`, by entity id: how many each has. */
  async function entriesPerEntity(entityType: string, operation: string): Promise<Map<string, number>> {
    const { hosts, request } = instances!
    const page = await request(hosts[1], 'GET', `/logs?entity_type=${entityType}&size=100`)
    expect(page.status).toBe(200)
    const counts = new Map<string, number>()
    for (const entry of page.body.data as { entity_id: string; operation: string }[]) {
      if (entry.operation === operation) counts.set(entry.entity_id, (counts.get(entry.entity_id) ?? 0) + 1)
    }
    return counts
  }

  /** Sessions (expiring 3 minutes after creation), tokens and an application expiring within 2 minutes, made on instance A. */
  async function createExpiring(): Promise<{ sessions: string[]; tokens: string[]; application: string }> {
    const { hosts, clock, request } = instances!
    const [a] = hosts
    const expiresAt = new Date(clock.now() + 2 * MINUTE).toISOString()
    const publicApp = await request(a, 'POST', '/applications', { body: { name: 'Checkout', type: 'public', permissions: ['token:create'] } })
    const privateApp = await request(a, 'POST', '/applications', { body: { name: 'Backend', type: 'private', permissions: ['token:create', 'token:read'] } })
    const shortLived = await request(a, 'POST', '/applications', { body: { name: 'Temp', type: 'private', permissions: ['token:read'], expires_at: expiresAt } })
    expect([publicApp.status, privateApp.status, shortLived.status]).toEqual([201, 201, 201])
    const sessions: string[] = []
    for (let i = 0; i < 5; i++) {
      const created = await request(a, 'POST', '/sessions', { key: publicApp.body.key })
      expect(created.status).toBe(201)
    }
    const listed = await request(a, 'GET', '/sessions?size=100')
    sessions.push(...(listed.body.data as { id: string }[]).map((session) => session.id))
    expect(sessions).toHaveLength(5)
    const tokens: string[] = []
    for (let i = 0; i < 5; i++) {
      const created = await request(a, 'POST', '/tokens', { key: privateApp.body.key, body: { id: `short-${i}`, type: 'token', data: `bye ${i}`, expires_at: expiresAt } })
      expect(created.status).toBe(201)
      tokens.push(created.body.id)
    }
    return { sessions, tokens, application: shortLived.body.id }
  }

  it('runs each due sweep on one instance only, and logs each expiry once', async () => {
    instances = await startTwoInstances()
    const { hosts, clock } = instances
    const expiring = await createExpiring()
    clock.advance(4 * MINUTE)

    const results = await Promise.all(hosts.map((host) => host.vault.services.jobs.runDueJobs()))
    const runsOf = (name: string) => results.flat().filter((result: SweepResult) => result.name === name)
    for (const sweep of ['expire-sessions', 'expire-tokens', 'expire-applications', 'deliver-mail', 'index-logs']) expect(runsOf(sweep)).toHaveLength(1)
    expect(runsOf('expire-sessions')[0]).toMatchObject({ processed: 5 })
    expect(results.flat().filter((result) => result.error)).toEqual([])

    // Due again a period later: again once.
    clock.advance(MINUTE)
    const again = await Promise.all(hosts.map((host) => host.vault.services.jobs.runDueJobs()))
    expect(again.flat().filter((result) => result.name === 'expire-sessions')).toHaveLength(1)

    const sessionExpiries = await entriesPerEntity('session', 'expire')
    expect(expiring.sessions.map((id) => sessionExpiries.get(id))).toEqual([1, 1, 1, 1, 1])
    const tokenDeletions = await entriesPerEntity('token', 'delete')
    expect(expiring.tokens.map((id) => tokenDeletions.get(id))).toEqual([1, 1, 1, 1, 1])
    expect((await entriesPerEntity('application', 'delete')).get(expiring.application)).toBe(1)
  })

  it('leaves a sweep whose instance died mid-run to another once its lease runs out', async () => {
    instances = await startTwoInstances()
    const { hosts, clock, databaseUrl } = instances
    const [, b] = hosts
    const expiring = await createExpiring()
    clock.advance(4 * MINUTE)
    // An instance took the lease of expire-sessions and died (its row is all that is left of it).
    const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } })
    try {
      await db('job_runs').insert({ name: 'expire-sessions', last_run_at: null, leased_until: clock.now() + SWEEP_LEASE_MS })
    } finally {
      await db.destroy()
    }
    const ran = async () => (await b.vault.services.jobs.runDueJobs()).map((result) => result.name)
    expect(await ran()).not.toContain('expire-sessions')
    clock.advance(SWEEP_LEASE_MS)
    expect(await ran()).toContain('expire-sessions')
    const sessionExpiries = await entriesPerEntity('session', 'expire')
    expect(expiring.sessions.map((id) => sessionExpiries.get(id))).toEqual([1, 1, 1, 1, 1])
  })

  it('logs each expiry once even when the two instances sweep at the same moment (no lease between them)', async () => {
    instances = await startTwoInstances()
    const { hosts, clock } = instances
    const expiring = await createExpiring()
    clock.advance(4 * MINUTE)
    const now = clock.now()

    // The sweeps themselves, side by side: what a lease outlived by a slow run would allow.
    const sweep = (host: ServiceHost) => {
      const services = host.vault.services
      return Promise.all([services.sessions.expireDue(now, 500), services.tokens.expireDue(now, 500), services.applications.expireDue(now, 500)])
    }
    const [first, second] = await Promise.all(hosts.map(sweep))
    expect(first.map((count, index) => count + second[index])).toEqual([5, 5, 1])

    const sessionExpiries = await entriesPerEntity('session', 'expire')
    expect(expiring.sessions.map((id) => sessionExpiries.get(id))).toEqual([1, 1, 1, 1, 1])
    const tokenDeletions = await entriesPerEntity('token', 'delete')
    expect(expiring.tokens.map((id) => tokenDeletions.get(id))).toEqual([1, 1, 1, 1, 1])
    expect((await entriesPerEntity('application', 'delete')).get(expiring.application)).toBe(1)
  })

  it('delivers each queued mail once when both instances deliver at the same moment', async () => {
    const port = await reservePort()
    instances = await startTwoInstances({ host: '127.0.0.1', port, requireTLS: false, from: 'vault@example.com' })
    const { hosts, clock, request } = instances
    // SMTP is down: the mail waits in the outbox, each after one failed attempt.
    const recipients = Array.from({ length: 8 }, (_, i) => `invitee-${i}@example.com`)
    for (const [index, email] of recipients.entries()) expect((await request(hosts[index % 2], 'POST', '/tenants/self/invitations', { body: { email } })).status).toBe(201)
    await Promise.all(hosts.map((host) => host.vault.services.mail.idle()))

    smtp = await startSmtpServer(port)
    clock.advance(MINUTE)
    const sent = await Promise.all(hosts.map((host) => host.vault.services.mail.deliverDue()))
    expect(sent[0] + sent[1]).toBe(recipients.length)
    expect(smtp.received.map((mail) => mail.to[0]).sort()).toEqual([...recipients].sort())

    // Nothing is left to send, by either.
    clock.advance(MINUTE)
    expect(await Promise.all(hosts.map((host) => host.vault.services.mail.deliverDue()))).toEqual([0, 0])
    expect(smtp.received).toHaveLength(recipients.length)
  })
})
