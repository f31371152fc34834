import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TenantInvitation } from '../../../src/shared/types'
import { invitationLink, linkToken } from '../../helpers/invitations'
import { startTestService, type TestService } from '../../helpers/service'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const HOUR = 60 * 60_000
const LIFETIME = 72 * HOUR

describe('tenant invitations', () => {
  let service: TestService
  let adminId: string
  let emailCounter = 0
  const nextEmail = () => `invitee${++emailCounter}@example.com`

  beforeAll(async () => {
    service = await startTestService()
    adminId = (await service.request('GET', '/applications/key')).body.id
  })
  afterAll(() => service.stop())

  async function invite(email = nextEmail(), key?: string): Promise<TenantInvitation> {
    const response = await service.request('POST', '/tenants/self/invitations', { key, body: { email } })
    expect(response.status).toBe(201)
    return response.body
  }

  async function tokenOf(invitation: TenantInvitation): Promise<string> {
    return linkToken(await invitationLink(service, invitation.id))
  }

  async function accept(body: unknown) {
    return service.request('POST', '/invitations/accept', { key: null, body })
  }

  async function keyWith(...permissions: string[]) {
    return (await service.createApplication({ name: permissions.join(' '), type: 'management', permissions })).key
  }

  describe('POST /tenants/self/invitations', () => {
    it('creates a PENDING invitation expiring in 72 hours, 201', async () => {
      const response = await service.request('POST', '/tenants/self/invitations', { body: { email: 'new.admin@example.com' } })
      expect(response.status).toBe(201)
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        tenant_id: service.tenantId,
        email: 'new.admin@example.com',
        status: 'PENDING',
        expires_at: new Date(service.clock.now() + LIFETIME).toISOString(),
        created_by: adminId,
        created_at: new Date(service.clock.now()).toISOString()
      })
    })

    it('queues an e-mail with a one-time acceptance link in the outbox (no SMTP configured)', async () => {
      const invitation = await invite('outbox.check@example.com')
      const outbox = (await service.host.vault.services.mail.listOutbox({ page: 1, size: 100 })).data
      const mail = outbox.find((entry) => entry.invitation_id === invitation.id)
      expect(mail).toMatchObject({ recipient: 'outbox.check@example.com', status: 'PENDING', attempts: 0 })
      expect(mail).not.toHaveProperty('last_error')
      expect(mail!.subject).toContain('Test tenant')
      expect(mail!.link).toMatch(new RegExp(`^${service.url}/invitations/accept\\?token=inv_[A-Za-z0-9_-]{43}$`))
    })

    it('stores the link secret only as a hash and the mail body sealed', async () => {
      const invitation = await invite('sealed.check@example.com')
      const token = await tokenOf(invitation)
      await service.host.vault.services.context.writes.idle()
      for (const file of ['tessera.db', 'tessera.db-wal']) {
        const path = join(service.dataDir, file)
        if (!existsSync(path)) continue
        const bytes = await readFile(path)
        expect(bytes.includes(Buffer.from(token.slice(4))), file).toBe(false)
        expect(bytes.includes(Buffer.from('/invitations/accept?token')), file).toBe(false)
      }
    })

    it('logs the creation', async () => {
      const invitation = await invite()
      const logs = await service.request('GET', `/logs?entity_type=invitation&entity_id=${invitation.id}`)
      expect(logs.body.data).toEqual([expect.objectContaining({ operation: 'create', message: 'Invitation created', actor_id: adminId, actor_type: 'application' })])
    })

    it('refuses a second invitation for the same address (any case) with 409', async () => {
      await invite('twice@example.com')
      const response = await service.request('POST', '/tenants/self/invitations', { body: { email: 'TWICE@example.com' } })
      expect(response.status).toBe(409)
    })

    it("refuses a member's address with 409", async () => {
      const response = await service.request('POST', '/tenants/self/invitations', { body: { email: 'owner@example.com' } })
      expect(response.status).toBe(409)
    })

    it('needs tenant:invitation:create: 403 otherwise', async () => {
      const key = await keyWith('tenant:invitation:read', 'tenant:invitation:update')
      const response = await service.request('POST', '/tenants/self/invitations', { key, body: { email: nextEmail() } })
      expect(response.status).toBe(403)
    })

    const badEmails: Array<[string, unknown]> = [
      ['a missing email', undefined],
      ['an email of the wrong type', 42],
      ['an empty email', ''],
      ['an address without @', 'not-an-email'],
      ['an address with a display name', 'Ada <ada@example.com>'],
      ['an address with surrounding space', ' ada@example.com'],
      ['an address with a comment', 'ada@example.com (Ada)'],
      ['two addresses', 'a@example.com, b@example.com'],
      ['consecutive dots', 'a..b@example.com'],
      ['a local part over 64 characters', `${'a'.repeat(65)}@example.com`],
      ['an address that is too long', `${'a'.repeat(60)}@${'b'.repeat(250)}.com`]
    ]
    for (const [what, email] of badEmails) {
      it(`answers ${what} with a 400 naming email`, async () => {
        const response = await service.request('POST', '/tenants/self/invitations', { body: email === undefined ? {} : { email } })
        expect(response.status).toBe(400)
        expect(response.headers.get('content-type')).toContain('application/problem+json')
        expect(Object.keys(response.body.errors)).toEqual(['email'])
      })
    }

    it('answers an unknown field, a non-object, malformed JSON and a wrong content type with 4xx', async () => {
      const unknown = await service.request('POST', '/tenants/self/invitations', { body: { email: nextEmail(), role: 'OWNER' } })
      expect(unknown.status).toBe(400)
      expect(Object.keys(unknown.body.errors)).toEqual(['role'])
      expect((await service.request('POST', '/tenants/self/invitations', { body: ['a@example.com'] })).status).toBe(400)
      expect((await service.request('POST', '/tenants/self/invitations', { rawBody: '{"email":' })).status).toBe(400)
      expect((await service.request('POST', '/tenants/self/invitations')).status).toBe(400)
      expect((await service.request('POST', '/tenants/self/invitations', { rawBody: 'email=a@b.c', contentType: 'application/x-www-form-urlencoded' })).status).toBe(415)
    })

    it('writes nothing for a rejected request', async () => {
      const before = await service.request('GET', '/tenants/self/invitations?size=100')
      await service.request('POST', '/tenants/self/invitations', { body: { email: 'bad address@example.com' } })
      await service.request('POST', '/tenants/self/invitations', { body: { email: 'fine@example.com', extra: true } })
      const after = await service.request('GET', '/tenants/self/invitations?size=100')
      expect(after.body.pagination.total_items).toBe(before.body.pagination.total_items)
    })
  })

  describe('POST /tenants/self/invitations/{id}/resend', () => {
    it('extends expires_at by 72 hours from the current expiry, 200, and invalidates the earlier link', async () => {
      const invitation = await invite()
      const oldToken = await tokenOf(invitation)
      service.clock.advance(HOUR)
      const response = await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`)
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        ...invitation,
        status: 'PENDING',
        expires_at: new Date(Date.parse(invitation.expires_at) + LIFETIME).toISOString(),
        modified_by: adminId,
        modified_at: new Date(service.clock.now()).toISOString()
      })
      const newToken = await tokenOf(invitation)
      expect(newToken).not.toBe(oldToken)
      expect((await accept({ token: oldToken, first_name: 'Old', last_name: 'Link' })).status).toBe(404)
      expect((await accept({ token: newToken, first_name: 'New', last_name: 'Link' })).status).toBe(201)
    })

    it('cancels the outdated mail so the old link is never delivered', async () => {
      const invitation = await invite()
      const oldLink = await invitationLink(service, invitation.id)
      await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`)
      const mails = (await service.host.vault.services.mail.listOutbox({ page: 1, size: 100 })).data.filter((entry) => entry.invitation_id === invitation.id)
      expect(mails).toHaveLength(1)
      expect(mails[0].link).not.toBe(oldLink)
    })

    it('makes an EXPIRED invitation PENDING again for 72 hours from now', async () => {
      const invitation = await invite()
      service.clock.advance(LIFETIME + HOUR)
      expect((await service.request('GET', `/tenants/self/invitations/${invitation.id}`)).body.status).toBe('EXPIRED')
      const response = await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`)
      expect(response.status).toBe(200)
      expect(response.body.status).toBe('PENDING')
      expect(response.body.expires_at).toBe(new Date(service.clock.now() + LIFETIME).toISOString())
    })

    it('needs both tenant:invitation:create and tenant:invitation:update', async () => {
      const invitation = await invite()
      const createOnly = await keyWith('tenant:invitation:create')
      const updateOnly = await keyWith('tenant:invitation:update')
      const both = await keyWith('tenant:invitation:create', 'tenant:invitation:update')
      expect((await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`, { key: createOnly })).status).toBe(403)
      expect((await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`, { key: updateOnly })).status).toBe(403)
      expect((await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`, { key: both })).status).toBe(200)
    })

    it('answers an unknown or malformed id with 404', async () => {
      expect((await service.request('POST', `/tenants/self/invitations/${UNKNOWN_ID}/resend`)).status).toBe(404)
      expect((await service.request('POST', '/tenants/self/invitations/nope/resend')).status).toBe(404)
    })

    it('logs the resend', async () => {
      const invitation = await invite()
      await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`)
      const logs = await service.request('GET', `/logs?entity_type=invitation&entity_id=${invitation.id}`)
      expect(logs.body.data[0]).toMatchObject({ operation: 'resend', message: 'Invitation resent' })
    })
  })

  describe('GET /tenants/self/invitations', () => {
    let fresh: TenantInvitation[]
    let stale: TenantInvitation

    beforeAll(async () => {
      service.clock.advance(10 * LIFETIME)
      stale = await invite()
      service.clock.advance(LIFETIME + 1)
      fresh = [await invite(), await invite()]
    })

    it('lists newest first with derived status', async () => {
      const response = await service.request('GET', '/tenants/self/invitations?size=3')
      expect(response.status).toBe(200)
      expect(response.body.data.slice(0, 2).map((invitation: TenantInvitation) => invitation.status)).toEqual(['PENDING', 'PENDING'])
      expect(response.body.data[2]).toEqual({ ...stale, status: 'EXPIRED' })
      expect(response.body.pagination.page_size).toBe(3)
    })

    it('filters by status', async () => {
      const pending = await service.request('GET', '/tenants/self/invitations?status=PENDING&size=100')
      expect(pending.body.data.map((invitation: TenantInvitation) => invitation.id).sort()).toEqual(fresh.map((invitation) => invitation.id).sort())
      expect(pending.body.pagination.total_items).toBe(2)
      const expired = await service.request('GET', '/tenants/self/invitations?status=EXPIRED&size=100')
      expect(expired.body.data.every((invitation: TenantInvitation) => invitation.status === 'EXPIRED')).toBe(true)
      expect(expired.body.data.map((invitation: TenantInvitation) => invitation.id)).toContain(stale.id)
    })

    it('accepts size up to 100 and pages past the end as empty', async () => {
      expect((await service.request('GET', '/tenants/self/invitations?size=100')).status).toBe(200)
      const past = await service.request('GET', '/tenants/self/invitations?page=999')
      expect(past.status).toBe(200)
      expect(past.body.data).toEqual([])
    })

    for (const [query, field] of [
      ['size=101', 'size'],
      ['size=0', 'size'],
      ['page=0', 'page'],
      ['page=x', 'page'],
      ['status=ACCEPTED', 'status'],
      ['status=pending', 'status'],
      ['status=PENDING&status=EXPIRED', 'status'],
      ['email=a@example.com', 'email']
    ]) {
      it(`answers ?${query} with a 400 naming ${field}`, async () => {
        const response = await service.request('GET', `/tenants/self/invitations?${query}`)
        expect(response.status).toBe(400)
        expect(Object.keys(response.body.errors)).toContain(field)
      })
    }

    it('needs tenant:invitation:read', async () => {
      const key = await keyWith('tenant:invitation:create')
      expect((await service.request('GET', '/tenants/self/invitations', { key })).status).toBe(403)
    })
  })

  describe('GET /tenants/self/invitations/{id}', () => {
    it('returns the invitation and logs the read', async () => {
      const invitation = await invite()
      const response = await service.request('GET', `/tenants/self/invitations/${invitation.id}`)
      expect(response.status).toBe(200)
      expect(response.body).toEqual(invitation)
      expect((await service.request('GET', `/tenants/self/invitations/${invitation.id.toUpperCase()}`)).body).toEqual(invitation)
      const logs = await service.request('GET', `/logs?entity_type=invitation&entity_id=${invitation.id}`)
      expect(logs.body.data[0]).toMatchObject({ operation: 'read', message: 'Invitation retrieved' })
    })

    it('shows EXPIRED once expires_at has passed', async () => {
      const invitation = await invite()
      service.clock.advance(LIFETIME)
      expect((await service.request('GET', `/tenants/self/invitations/${invitation.id}`)).body.status).toBe('EXPIRED')
    })

    it('answers an unknown or malformed id with 404, and a missing permission with 403', async () => {
      expect((await service.request('GET', `/tenants/self/invitations/${UNKNOWN_ID}`)).status).toBe(404)
      expect((await service.request('GET', '/tenants/self/invitations/123')).status).toBe(404)
      const invitation = await invite()
      const key = await keyWith('tenant:invitation:delete')
      expect((await service.request('GET', `/tenants/self/invitations/${invitation.id}`, { key })).status).toBe(403)
    })
  })

  describe('DELETE /tenants/self/invitations/{id}', () => {
    it('removes the invitation, 204, kills its link and cancels its mail', async () => {
      const invitation = await invite()
      const token = await tokenOf(invitation)
      const response = await service.request('DELETE', `/tenants/self/invitations/${invitation.id}`)
      expect(response.status).toBe(204)
      expect((await service.request('GET', `/tenants/self/invitations/${invitation.id}`)).status).toBe(404)
      expect((await accept({ token, first_name: 'A', last_name: 'B' })).status).toBe(404)
      const outbox = (await service.host.vault.services.mail.listOutbox({ page: 1, size: 100 })).data
      expect(outbox.some((entry) => entry.invitation_id === invitation.id)).toBe(false)
      expect((await service.request('DELETE', `/tenants/self/invitations/${invitation.id}`)).status).toBe(404)
      const logs = await service.request('GET', `/logs?entity_type=invitation&entity_id=${invitation.id}`)
      expect(logs.body.data[0]).toMatchObject({ operation: 'delete', message: 'Invitation deleted' })
    })

    it('answers a malformed id with 404 and a missing permission with 403', async () => {
      expect((await service.request('DELETE', '/tenants/self/invitations/zzz')).status).toBe(404)
      const invitation = await invite()
      const key = await keyWith('tenant:invitation:read')
      expect((await service.request('DELETE', `/tenants/self/invitations/${invitation.id}`, { key })).status).toBe(403)
    })
  })

  describe('POST /invitations/accept', () => {
    it('creates the user and an ADMIN member, 201, consumes the invitation and logs it', async () => {
      const email = nextEmail()
      const invitation = await invite(email)
      const response = await accept({ token: await tokenOf(invitation), first_name: 'Katherine', last_name: 'Johnson' })
      expect(response.status).toBe(201)
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        tenant_id: service.tenantId,
        role: 'ADMIN',
        user: { id: expect.stringMatching(UUID), email, first_name: 'Katherine', last_name: 'Johnson' },
        created_by: adminId,
        created_at: new Date(service.clock.now()).toISOString()
      })
      const members = await service.request('GET', `/tenants/self/members?user_id=${response.body.user.id}`)
      expect(members.body.data).toEqual([response.body])
      expect((await service.request('GET', `/tenants/self/invitations/${invitation.id}`)).status).toBe(404)
      const logs = await service.request('GET', `/logs?entity_type=invitation&entity_id=${invitation.id}`)
      expect(logs.body.data[0]).toMatchObject({ operation: 'accept', actor_type: 'user', actor_id: response.body.user.id })
      const memberLogs = await service.request('GET', `/logs?entity_type=member&entity_id=${response.body.id}`)
      expect(memberLogs.body.data[0]).toMatchObject({ operation: 'create', message: 'Member created' })
    })

    it('works once: the same link again is a 404', async () => {
      const invitation = await invite()
      const token = await tokenOf(invitation)
      expect((await accept({ token, first_name: 'A', last_name: 'B' })).status).toBe(201)
      const again = await accept({ token, first_name: 'A', last_name: 'B' })
      expect(again.status).toBe(404)
      expect(again.headers.get('content-type')).toContain('application/problem+json')
    })

    it('answers an expired link with 410', async () => {
      const invitation = await invite()
      const token = await tokenOf(invitation)
      service.clock.advance(LIFETIME)
      const response = await accept({ token, first_name: 'A', last_name: 'B' })
      expect(response.status).toBe(410)
      expect(response.body).toMatchObject({ title: 'Gone', code: 'invitation_expired' })
      expect(response.body.detail).toMatch(/expired/)
    })

    it('reuses the existing user of a re-invited former member', async () => {
      const email = nextEmail()
      const first = (await accept({ token: await tokenOf(await invite(email)), first_name: 'Mary', last_name: 'Jackson' })).body
      expect((await service.request('DELETE', `/tenants/self/members/${first.id}`)).status).toBe(204)
      const second = await accept({ token: await tokenOf(await invite(email.toUpperCase())), first_name: 'Other', last_name: 'Name' })
      expect(second.status).toBe(201)
      expect(second.body.user).toEqual(first.user)
      expect(second.body.id).not.toBe(first.id)
    })

    describe('bad input', () => {
      let token: string
      beforeAll(async () => {
        token = await tokenOf(await invite())
      })

      const cases: Array<[string, () => unknown, string]> = [
        ['a missing token', () => ({ first_name: 'A', last_name: 'B' }), 'token'],
        ['a token of the wrong type', () => ({ token: 7, first_name: 'A', last_name: 'B' }), 'token'],
        ['an empty token', () => ({ token: '', first_name: 'A', last_name: 'B' }), 'token'],
        ['a token that is too long', () => ({ token: 'x'.repeat(201), first_name: 'A', last_name: 'B' }), 'token'],
        ['a missing first_name', () => ({ token, last_name: 'B' }), 'first_name'],
        ['a blank first_name', () => ({ token, first_name: '   ', last_name: 'B' }), 'first_name'],
        ['a first_name of the wrong type', () => ({ token, first_name: ['A'], last_name: 'B' }), 'first_name'],
        ['a first_name that is too long', () => ({ token, first_name: 'A'.repeat(201), last_name: 'B' }), 'first_name'],
        ['a missing last_name', () => ({ token, first_name: 'A' }), 'last_name'],
        ['a last_name of the wrong type', () => ({ token, first_name: 'A', last_name: null }), 'last_name'],
        ['a last_name that is too long', () => ({ token, first_name: 'A', last_name: 'B'.repeat(201) }), 'last_name'],
        ['an unknown field', () => ({ token, first_name: 'A', last_name: 'B', role: 'OWNER' }), 'role'],
        ['a body that is not an object', () => [token], '(body)']
      ]
      for (const [what, body, field] of cases) {
        it(`answers ${what} with a 400 naming ${field}`, async () => {
          const response = await accept(body())
          expect(response.status).toBe(400)
          expect(response.headers.get('content-type')).toContain('application/problem+json')
          expect(Object.keys(response.body.errors)).toContain(field)
        })
      }

      it('answers malformed JSON, no body and a wrong content type with 4xx', async () => {
        expect((await service.request('POST', '/invitations/accept', { key: null, rawBody: '{"token":' })).status).toBe(400)
        expect((await service.request('POST', '/invitations/accept', { key: null })).status).toBe(400)
        expect((await service.request('POST', '/invitations/accept', { key: null, rawBody: 'x', contentType: 'text/plain' })).status).toBe(415)
      })

      it('wrote nothing: the link still works afterwards', async () => {
        expect((await accept({ token, first_name: 'Still', last_name: 'Valid' })).status).toBe(201)
      })
    })
  })

  describe('GET /invitations/accept (the page)', () => {
    it('serves a self-contained form under a strict CSP', async () => {
      const email = nextEmail()
      const token = await tokenOf(await invite(email))
      const response = await fetch(`${service.url}/invitations/accept?token=${encodeURIComponent(token)}`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
      const csp = response.headers.get('content-security-policy')!
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("form-action 'self'")
      expect(csp).not.toContain('unsafe-inline')
      expect(response.headers.get('referrer-policy')).toBe('no-referrer')
      expect(response.headers.get('cache-control')).toBe('no-store')
      const html = await response.text()
      expect(html).toContain(email)
      expect(html).toContain('<form method="post" action="accept">')
      expect(html).toContain(`value="${token}"`)
      expect(html).not.toMatch(/<script|https?:\/\/|src=/i)
    })

    it('accepts through the form post and shows a success page', async () => {
      const email = nextEmail()
      const token = await tokenOf(await invite(email))
      const response = await fetch(`${service.url}/invitations/accept`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, first_name: 'Dorothy', last_name: 'Vaughan' })
      })
      expect(response.status).toBe(201)
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
      expect(await response.text()).toContain('Welcome, Dorothy!')
      const members = await service.request('GET', '/tenants/self/members?size=50')
      expect(members.body.data.some((member: { user: { email?: string } }) => member.user.email === email)).toBe(true)
    })

    it('refuses a form body it cannot decode as a JSON body is refused: 400, 415, never a 500, and keeps the link valid', async () => {
      const token = await tokenOf(await invite())
      const post = (headers: Record<string, string>, body: string | Buffer) =>
        fetch(`${service.url}/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body })
      const form = new URLSearchParams({ token, first_name: 'Mary', last_name: 'Jackson' }).toString()
      expect((await post({ 'content-encoding': 'gzip' }, form)).status).toBe(400)
      expect((await post({ 'content-encoding': 'br2' }, form)).status).toBe(415)
      expect((await post({ 'content-type': 'application/x-www-form-urlencoded; charset=utf-16' }, form)).status).toBe(415)
      expect((await post({ 'content-encoding': 'gzip' }, gzipSync(form))).status).toBe(201)
    })

    it('shows the form again with the error when a name is missing, and keeps the link valid', async () => {
      const token = await tokenOf(await invite())
      const response = await fetch(`${service.url}/invitations/accept`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, first_name: 'Only <first>', last_name: '' })
      })
      expect(response.status).toBe(400)
      const html = await response.text()
      expect(html).toContain('last_name')
      expect(html).toContain('value="Only &#60;first&#62;"')
      expect((await accept({ token, first_name: 'A', last_name: 'B' })).status).toBe(201)
    })

    it('answers unknown, expired and missing tokens with a 4xx page', async () => {
      const invalid = await fetch(`${service.url}/invitations/accept?token=inv_nope`)
      expect(invalid.status).toBe(404)
      expect(invalid.headers.get('content-type')).toContain('text/html')
      expect(await invalid.text()).toContain('not valid')
      const token = await tokenOf(await invite())
      service.clock.advance(LIFETIME)
      const expired = await fetch(`${service.url}/invitations/accept?token=${token}`)
      expect(expired.status).toBe(410)
      expect(await expired.text()).toContain('expired')
      expect((await fetch(`${service.url}/invitations/accept`)).status).toBe(400)
      const formExpired = await fetch(`${service.url}/invitations/accept`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, first_name: 'A', last_name: 'B' })
      })
      expect(formExpired.status).toBe(410)
    })
  })
})
