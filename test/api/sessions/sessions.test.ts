import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'

const MINUTE = 60_000

describe('sessions', () => {
  let service: TestService
  let publicApp: { id: string; key: string }
  let privateApp: { id: string; key: string }
  let managementKey: string

  beforeAll(async () => {
    service = await startTestService()
    publicApp = await service.createApplication({ name: 'Checkout page', type: 'public', permissions: ['token:create'] })
    privateApp = await service.createApplication({ name: 'Backend', type: 'private', permissions: ['token:create', 'token:read'] })
    managementKey = service.adminKey
    // Tokens the sessions' grants are checked against.
    for (const [id, containers] of [
      ['sess-visible', ['/general/high/']],
      ['other-token', ['/general/high/']],
      ['pci-token', ['/pci/high/']]
    ] as const) {
      const response = await service.request('POST', '/tokens', { key: privateApp.key, body: { id, type: 'token', data: `secret ${id}`, containers } })
      expect(response.status).toBe(201)
    }
  })
  afterAll(() => service.stop())

  async function createSession() {
    const response = await service.request('POST', '/sessions', { key: publicApp.key })
    expect(response.status).toBe(201)
    return response.body as { session_key: string; nonce: string; expires_at: string }
  }

  async function authorize(body: Record<string, unknown>, key = privateApp.key) {
    return service.request('POST', '/sessions/authorize', { key, body })
  }

  describe('POST /sessions', () => {
    it('creates an unauthorized session for a public application, 201, expiring 3 minutes later', async () => {
      const response = await service.request('POST', '/sessions', { key: publicApp.key })
      expect(response.status).toBe(201)
      expect(response.body).toEqual({
        session_key: expect.stringMatching(/^key_sess_[A-Za-z0-9_-]{43}$/),
        nonce: expect.any(String),
        expires_at: new Date(service.clock.now() + 3 * MINUTE).toISOString()
      })
      expect(response.body.nonce).not.toBe(response.body.session_key)
    })

    it('accepts an empty JSON object as the body', async () => {
      const response = await service.request('POST', '/sessions', { key: publicApp.key, body: {} })
      expect(response.status).toBe(201)
    })

    it('rejects body fields with a 400 naming them', async () => {
      const response = await service.request('POST', '/sessions', { key: publicApp.key, body: { permissions: ['token:read'] } })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(response.body.errors).toHaveProperty('permissions')
    })

    it('rejects a body that is not an object, malformed JSON and a wrong content type', async () => {
      expect((await service.request('POST', '/sessions', { key: publicApp.key, body: [] })).status).toBe(400)
      expect((await service.request('POST', '/sessions', { key: publicApp.key, rawBody: '{"a":' })).status).toBe(400)
      expect((await service.request('POST', '/sessions', { key: publicApp.key, rawBody: 'x', contentType: 'text/plain' })).status).toBe(415)
    })

    it('refuses private and management keys with 403', async () => {
      expect((await service.request('POST', '/sessions', { key: privateApp.key })).status).toBe(403)
      expect((await service.request('POST', '/sessions', { key: managementKey })).status).toBe(403)
    })

    it('refuses a session key with 403, even an authorized one', async () => {
      const session = await createSession()
      expect((await authorize({ nonce: session.nonce, permissions: ['token:create'] })).status).toBe(204)
      expect((await service.request('POST', '/sessions', { key: session.session_key })).status).toBe(403)
    })

    it('needs a key: 401 without one', async () => {
      expect((await service.request('POST', '/sessions', { key: null })).status).toBe(401)
    })
  })

  describe('session keys before authorization', () => {
    it('get 401 everywhere until authorized', async () => {
      const session = await createSession()
      for (const [method, path] of [
        ['GET', '/tokens/sess-visible'],
        ['GET', '/tokens'],
        ['POST', '/tokens'],
        ['GET', '/applications/key']
      ] as const) {
        const response = await service.request(method, path, { key: session.session_key, body: method === 'POST' ? { type: 'token', data: 'x' } : undefined })
        expect(response.status, `${method} ${path}`).toBe(401)
      }
    })
  })

  describe('POST /sessions/authorize', () => {
    it('grants exactly the given permissions, 204 with no body', async () => {
      const session = await createSession()
      const response = await authorize({ nonce: session.nonce, permissions: ['token:create'] })
      expect(response.status).toBe(204)
      expect(response.body).toBeUndefined()
      const created = await service.request('POST', '/tokens', { key: session.session_key, body: { type: 'token', data: 'collected' } })
      expect(created.status).toBe(201)
      expect((await service.request('GET', `/tokens/${created.body.id}`, { key: session.session_key })).status).toBe(403)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(403)
      expect((await service.request('GET', '/logs', { key: session.session_key })).status).toBe(403)
    })

    it('refuses to grant a more revealing transform than the application holds, 403', async () => {
      const session = await createSession()
      const reveal = { priority: 1, conditions: [{ attribute: 'id', operator: 'equals', value: 'sess-visible' }], transform: 'reveal', permissions: ['token:read'] }
      const response = await authorize({ nonce: session.nonce, rules: [reveal] })
      expect(response.status).toBe(403)
      expect(response.body.detail).toContain('token:read with reveal')
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(401)
    })

    it('refuses to reveal through a session a container the application only masks, 403', async () => {
      // Reveals /pci/, masks everything else.
      const pciRevealer = await service.createApplication({
        name: 'PCI backend',
        type: 'private',
        permissions: ['token:read'],
        rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }]
      })
      const refused = await createSession()
      const revealGeneral = { priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:read'] }
      const response = await authorize({ nonce: refused.nonce, rules: [revealGeneral] }, pciRevealer.key)
      expect(response.status).toBe(403)
      expect(response.body.detail).toContain('token:read with reveal')
      expect((await service.request('GET', '/tokens/sess-visible', { key: refused.session_key })).status).toBe(401)

      const allowed = await createSession()
      const revealPci = { priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }
      expect((await authorize({ nonce: allowed.nonce, rules: [revealPci] }, pciRevealer.key)).status).toBe(204)
      expect((await service.request('GET', '/tokens/pci-token', { key: allowed.session_key })).body.data).toBe('secret pci-token')
    })

    it('applies rules with conditions and their transforms', async () => {
      const revealer = await service.createApplication({
        name: 'Revealing backend',
        type: 'private',
        rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: ['token:read'] }]
      })
      const session = await createSession()
      const response = await authorize({
        nonce: session.nonce,
        rules: [
          {
            description: 'reveal the one token this page needs',
            priority: 1,
            conditions: [{ attribute: 'id', operator: 'equals', value: 'sess-visible' }],
            transform: 'reveal',
            permissions: ['token:read']
          },
          { priority: 2, conditions: [{ attribute: 'container', operator: 'starts_with', value: '/pci/' }], transform: 'redact', permissions: ['token:read'] }
        ]
      }, revealer.key)
      expect(response.status).toBe(204)
      const visible = await service.request('GET', '/tokens/sess-visible', { key: session.session_key })
      expect(visible.status).toBe(200)
      expect(visible.body.data).toBe('secret sess-visible')
      const redacted = await service.request('GET', '/tokens/pci-token', { key: session.session_key })
      expect(redacted.status).toBe(200)
      expect(redacted.body).not.toHaveProperty('data')
      expect((await service.request('GET', '/tokens/other-token', { key: session.session_key })).status).toBe(403)
      expect((await service.request('POST', '/tokens', { key: session.session_key, body: { type: 'token', data: 'x' } })).status).toBe(403)
    })

    it('answers a used nonce with 409 and leaves the first grant in place', async () => {
      const session = await createSession()
      expect((await authorize({ nonce: session.nonce, permissions: ['token:create'] })).status).toBe(204)
      const again = await authorize({ nonce: session.nonce, permissions: ['token:read'] })
      expect(again.status).toBe(409)
      expect(again.headers.get('content-type')).toContain('application/problem+json')
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(403)
    })

    it('refuses to grant permissions the authorizing application does not hold, 403', async () => {
      const session = await createSession()
      const plain = await authorize({ nonce: session.nonce, permissions: ['token:read', 'token:use'] })
      expect(plain.status).toBe(403)
      expect(plain.body.detail).toContain('token:use')
      const inRule = await authorize({
        nonce: session.nonce,
        rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'starts_with', value: 'x' }], transform: 'reveal', permissions: ['token:delete'] }]
      })
      expect(inRule.status).toBe(403)
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] })).status).toBe(204)
    })

    it('answers an unknown nonce with 404', async () => {
      const response = await authorize({ nonce: 'nonce_unknown', permissions: ['token:read'] })
      expect(response.status).toBe(404)
    })

    it('refuses public, management and session keys with 403', async () => {
      const session = await createSession()
      const authorized = await createSession()
      await authorize({ nonce: authorized.nonce, permissions: ['token:create'] })
      for (const key of [publicApp.key, managementKey, authorized.session_key]) {
        expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] }, key)).status).toBe(403)
      }
      // The refused attempts did not use the nonce up.
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] })).status).toBe(204)
    })

    it('keeps the session valid until the given expires_at, then 401', async () => {
      const session = await createSession()
      const expiresAt = new Date(service.clock.now() + 30 * MINUTE).toISOString()
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'], expires_at: expiresAt })).status).toBe(204)
      service.clock.advance(29 * MINUTE)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(200)
      service.clock.advance(MINUTE)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(401)
    })

    it('expires an authorized session 3 minutes after creation by default', async () => {
      const session = await createSession()
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] })).status).toBe(204)
      service.clock.advance(3 * MINUTE - 1)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(200)
      service.clock.advance(1)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(401)
    })

    it('answers the nonce of an expired session with 404', async () => {
      const session = await createSession()
      service.clock.advance(3 * MINUTE)
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] })).status).toBe(404)
    })

    it('logs creation and authorization with the application as actor', async () => {
      const session = await createSession()
      await authorize({ nonce: session.nonce, permissions: ['token:read'] })
      const logs = await service.request('GET', '/logs?entity_type=session&size=100')
      expect(logs.status).toBe(200)
      const entries = logs.body.data as Array<Record<string, string>>
      const sessionId = entries[0].entity_id
      expect(entries.filter((entry) => entry.entity_id === sessionId)).toEqual([
        expect.objectContaining({ operation: 'authorize', actor_id: privateApp.id, actor_type: 'application', message: 'Session authorized' }),
        expect.objectContaining({ operation: 'create', actor_id: publicApp.id, actor_type: 'application', message: 'Session created' })
      ])
      expect(JSON.stringify(entries)).not.toContain(session.nonce)
      expect(JSON.stringify(entries)).not.toContain(session.session_key)
    })

    describe('bad input', () => {
      let nonce: string
      beforeAll(async () => {
        nonce = (await createSession()).nonce
      })

      const cases: Array<[string, () => Record<string, unknown>, string]> = [
        ['a missing nonce', () => ({ permissions: ['token:read'] }), 'nonce'],
        ['a nonce of the wrong type', () => ({ nonce: 42, permissions: ['token:read'] }), 'nonce'],
        ['an empty nonce', () => ({ nonce: '', permissions: ['token:read'] }), 'nonce'],
        ['a nonce that is too long', () => ({ nonce: 'n'.repeat(201), permissions: ['token:read'] }), 'nonce'],
        ['permissions of the wrong type', () => ({ nonce, permissions: 'token:read' }), 'permissions'],
        ['an unknown permission', () => ({ nonce, permissions: ['token:fly'] }), 'permissions[0]'],
        ['a management permission', () => ({ nonce, permissions: ['application:read'] }), 'permissions[0]'],
        ['neither permissions nor rules', () => ({ nonce }), 'permissions'],
        ['empty permissions and rules', () => ({ nonce, permissions: [], rules: [] }), 'rules'],
        ['rules of the wrong type', () => ({ nonce, rules: {} }), 'rules'],
        [
          'a rule with container and conditions',
          () => ({
            nonce,
            rules: [{ priority: 1, container: '/a/', conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }], transform: 'reveal', permissions: ['token:read'] }]
          }),
          'rules[0].conditions'
        ],
        [
          'a condition with an unknown operator',
          () => ({ nonce, rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'like', value: 'x' }], transform: 'reveal', permissions: ['token:read'] }] }),
          'rules[0].conditions[0].operator'
        ],
        [
          'a condition with an unknown attribute',
          () => ({ nonce, rules: [{ priority: 1, conditions: [{ attribute: 'type', operator: 'equals', value: 'x' }], transform: 'reveal', permissions: ['token:read'] }] }),
          'rules[0].conditions[0].attribute'
        ],
        ['a rule without priority', () => ({ nonce, rules: [{ container: '/a/', transform: 'reveal', permissions: ['token:read'] }] }), 'rules[0].priority'],
        ['a rule with an unknown transform', () => ({ nonce, rules: [{ priority: 1, container: '/a/', transform: 'show', permissions: ['token:read'] }] }), 'rules[0].transform'],
        ['a rule with an unknown field', () => ({ nonce, rules: [{ priority: 1, container: '/a/', transform: 'reveal', permissions: ['token:read'], x: 1 }] }), 'rules[0].x'],
        ['expires_at of the wrong type', () => ({ nonce, permissions: ['token:read'], expires_at: 1_900_000_000 }), 'expires_at'],
        ['a malformed expires_at', () => ({ nonce, permissions: ['token:read'], expires_at: 'tomorrow' }), 'expires_at'],
        ['an expires_at in the past', () => ({ nonce, permissions: ['token:read'], expires_at: '2020-01-01T00:00:00Z' }), 'expires_at'],
        ['an expires_at that is too long', () => ({ nonce, permissions: ['token:read'], expires_at: '2030-01-01T00:00:00Z'.padEnd(101, ' ') }), 'expires_at'],
        ['an unknown field', () => ({ nonce, permissions: ['token:read'], session: 'x' }), 'session']
      ]

      for (const [what, body, field] of cases) {
        it(`answers ${what} with a 400 naming ${field}`, async () => {
          const response = await authorize(body())
          expect(response.status).toBe(400)
          expect(response.headers.get('content-type')).toContain('application/problem+json')
          expect(Object.keys(response.body.errors)).toContain(field)
        })
      }

      it('answers a body that is not an object, malformed JSON, no body and a wrong content type with 4xx', async () => {
        expect((await service.request('POST', '/sessions/authorize', { key: privateApp.key, body: 'nonce' })).status).toBe(400)
        expect((await service.request('POST', '/sessions/authorize', { key: privateApp.key, rawBody: '{"nonce":' })).status).toBe(400)
        expect((await service.request('POST', '/sessions/authorize', { key: privateApp.key })).status).toBe(400)
        expect((await service.request('POST', '/sessions/authorize', { key: privateApp.key, rawBody: 'nonce=x', contentType: 'application/x-www-form-urlencoded' })).status).toBe(415)
      })

      it('wrote nothing: the nonce still authorizes after all those rejections', async () => {
        expect((await authorize({ nonce, permissions: ['token:read'] })).status).toBe(204)
      })
    })
  })

  describe('session keys before authorization', () => {
    it('get their own 401 message, and the generic one once expired', async () => {
      const session = await createSession()
      const pending = await service.request('GET', '/tokens', { key: session.session_key })
      expect(pending.status).toBe(401)
      expect(pending.headers.get('content-type')).toContain('application/problem+json')
      expect(pending.body.detail).toBe('This session has not been authorized yet.')
      service.clock.advance(3 * MINUTE)
      const expired = await service.request('GET', '/tokens', { key: session.session_key })
      expect(expired.status).toBe(401)
      expect(expired.body.detail).toBe('The API key is invalid or has expired.')
    })

    it('work at once after authorization, although the pending key was refused before', async () => {
      const session = await createSession()
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(401)
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] })).status).toBe(204)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(200)
    })
  })

  describe('expires_at cap', () => {
    const HOUR = 60 * MINUTE
    const at = (ms: number) => new Date(service.clock.now() + ms).toISOString()

    it('refuses an expires_at in the year 2999 with a 400 naming expires_at, and the nonce still works', async () => {
      const session = await createSession()
      const response = await authorize({ nonce: session.nonce, permissions: ['token:read'], expires_at: '2999-01-01T00:00:00Z' })
      expect(response.status).toBe(400)
      expect(response.body.errors).toEqual({ expires_at: ['must be at most 24 hours from now'] })
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] })).status).toBe(204)
    })

    it('accepts exactly 24 hours from now and refuses a millisecond more', async () => {
      const refused = await createSession()
      expect((await authorize({ nonce: refused.nonce, permissions: ['token:read'], expires_at: at(24 * HOUR + 1) })).status).toBe(400)
      const session = await createSession()
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'], expires_at: at(24 * HOUR) })).status).toBe(204)
      service.clock.advance(24 * HOUR - 1)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(200)
      service.clock.advance(1)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(401)
    })

    it('follows a configured cap', async () => {
      const capped = await startTestService({ sessionMaxTtlMs: HOUR })
      try {
        const page = await capped.createApplication({ name: 'Page', type: 'public', permissions: ['token:create'] })
        const backend = await capped.createApplication({ name: 'Backend', type: 'private', permissions: ['token:create'] })
        const { nonce } = (await capped.request('POST', '/sessions', { key: page.key })).body
        const later = (ms: number) => new Date(capped.clock.now() + ms).toISOString()
        const tooLate = await capped.request('POST', '/sessions/authorize', { key: backend.key, body: { nonce, permissions: ['token:create'], expires_at: later(HOUR + 1000) } })
        expect(tooLate.status).toBe(400)
        expect(tooLate.body.errors).toEqual({ expires_at: ['must be at most 1 hour from now'] })
        const body = { nonce, permissions: ['token:create'], expires_at: later(HOUR) }
        expect((await capped.request('POST', '/sessions/authorize', { key: backend.key, body })).status).toBe(204)
      } finally {
        await capped.stop()
      }
    })
  })

  describe('when the authorizing application changes', () => {
    let authorizer: { id: string; key: string }
    const readWithin = { permissions: ['token:create', 'token:read'] }

    beforeAll(async () => {
      authorizer = await service.createApplication({ name: 'Changing backend', type: 'private', ...readWithin })
    })

    async function readingSession(grant: Record<string, unknown> = { permissions: ['token:read'] }): Promise<string> {
      const session = await createSession()
      expect((await authorize({ nonce: session.nonce, ...grant }, authorizer.key)).status).toBe(204)
      // Used once, so its actor is cached: revocation must reach the cache too.
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(200)
      return session.session_key
    }

    const update = (body: Record<string, unknown>) => service.request('PUT', `/applications/${authorizer.id}`, { body: { name: 'Changing backend', ...body } })
    const status = async (key: string) => (await service.request('GET', '/tokens/sess-visible', { key })).status

    it('keeps the sessions whose grant it still holds', async () => {
      const key = await readingSession()
      expect((await update({ permissions: ['token:read', 'token:search'] })).status).toBe(200)
      expect(await status(key)).toBe(200)
      expect((await update(readWithin)).status).toBe(200)
      expect(await status(key)).toBe(200)
    })

    it('revokes at once the sessions granting a permission it no longer holds, and logs it', async () => {
      const reader = await readingSession()
      const creating = await createSession()
      expect((await authorize({ nonce: creating.nonce, permissions: ['token:create'] }, authorizer.key)).status).toBe(204)
      const creator = creating.session_key
      expect((await update({ permissions: ['token:create'] })).status).toBe(200)
      expect(await status(reader)).toBe(401)
      expect((await service.request('POST', '/tokens', { key: creator, body: { type: 'token', data: 'still allowed' } })).status).toBe(201)
      const logs = await service.request('GET', '/logs?entity_type=session&size=5')
      expect(logs.body.data[0]).toMatchObject({
        operation: 'delete',
        actor_id: expect.any(String),
        message: 'Session revoked: its authorizing application no longer holds what it granted'
      })
      expect((await update(readWithin)).status).toBe(200)
      expect(await status(reader)).toBe(401)
    })

    it('revokes a session whose transform the application now shows less of, per container', async () => {
      expect((await update({ rules: [{ priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:read'] }] })).status).toBe(200)
      const revealGeneral = { rules: [{ priority: 1, conditions: [{ attribute: 'container', operator: 'starts_with', value: '/general/' }], transform: 'reveal', permissions: ['token:read'] }] }
      const key = await readingSession(revealGeneral)
      expect((await service.request('GET', '/tokens/sess-visible', { key })).body.data).toBe('secret sess-visible')
      // Still reveals /general/, now masks elsewhere: the grant fits.
      const narrower = [
        { priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:read'] },
        { priority: 2, container: '/', transform: 'mask', permissions: ['token:read'] }
      ]
      expect((await update({ rules: narrower })).status).toBe(200)
      expect(await status(key)).toBe(200)
      // Masks /general/ now: a revealing session no longer fits.
      expect((await update({ rules: [{ priority: 1, container: '/general/', transform: 'mask', permissions: ['token:read'] }] })).status).toBe(200)
      expect(await status(key)).toBe(401)
      expect((await update(readWithin)).status).toBe(200)
    })

    it('revokes the sessions it authorized when its key is regenerated', async () => {
      const key = await readingSession()
      const regenerated = await service.request('POST', `/applications/${authorizer.id}/regenerate`)
      expect(regenerated.status).toBe(200)
      authorizer.key = regenerated.body.key
      expect(await status(key)).toBe(401)
    })

    it('revokes the sessions a public application created when its key is regenerated', async () => {
      const page = await service.createApplication({ name: 'Regenerated page', type: 'public', permissions: ['token:create'] })
      const { session_key: sessionKey, nonce } = (await service.request('POST', '/sessions', { key: page.key })).body
      expect((await authorize({ nonce, permissions: ['token:read'] }, authorizer.key)).status).toBe(204)
      expect(await status(sessionKey)).toBe(200)
      expect((await service.request('POST', `/applications/${page.id}/regenerate`)).status).toBe(200)
      expect(await status(sessionKey)).toBe(401)
    })

    it('ends the session when the authorizing application expires, before any sweep', async () => {
      const expiring = await service.createApplication({
        name: 'Expiring backend',
        type: 'private',
        permissions: ['token:read'],
        expires_at: new Date(service.clock.now() + 10 * MINUTE).toISOString()
      })
      const session = await createSession()
      const expiresAt = new Date(service.clock.now() + 60 * MINUTE).toISOString()
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'], expires_at: expiresAt }, expiring.key)).status).toBe(204)
      service.clock.advance(10 * MINUTE - 1)
      expect(await status(session.session_key)).toBe(200)
      service.clock.advance(1)
      expect(await status(session.session_key)).toBe(401)
    })
  })

  describe('GET /sessions and DELETE /sessions/{id}', () => {
    let lister: { id: string; key: string }
    let revoker: { id: string; key: string }

    beforeAll(async () => {
      lister = await service.createApplication({ name: 'Session auditor', type: 'management', permissions: ['application:read'] })
      revoker = await service.createApplication({ name: 'Session revoker', type: 'management', permissions: ['application:delete'] })
    })

    async function authorizedSession(expiresInMs = 30 * MINUTE) {
      const session = await createSession()
      const expires_at = new Date(service.clock.now() + expiresInMs).toISOString()
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'], expires_at })).status).toBe(204)
      return session
    }

    const list = (query = '', key = lister.key) => service.request('GET', `/sessions${query}`, { key })

    it('lists active sessions newest first, authorized or not, without keys or nonces', async () => {
      service.clock.advance(MINUTE)
      const older = await authorizedSession()
      service.clock.advance(1)
      const pending = await createSession()
      const response = await list('?size=2')
      expect(response.status).toBe(200)
      expect(response.body.pagination).toMatchObject({ page_number: 1, page_size: 2 })
      const [newest, second] = response.body.data
      expect(newest).toEqual({
        id: expect.any(String),
        tenant_id: service.tenantId,
        application_id: publicApp.id,
        status: 'PENDING',
        permissions: [],
        rules: [],
        expires_at: pending.expires_at,
        created_at: new Date(service.clock.now()).toISOString()
      })
      expect(second).toMatchObject({
        application_id: publicApp.id,
        status: 'AUTHORIZED',
        authorized_by: privateApp.id,
        authorized_at: expect.any(String),
        permissions: ['token:read'],
        expires_at: new Date(Date.parse(second.created_at) + 30 * MINUTE).toISOString()
      })
      const text = JSON.stringify(response.body)
      for (const secret of [older.session_key, older.nonce, pending.session_key, pending.nonce]) expect(text).not.toContain(secret)
      expect(text).not.toMatch(/hash/)
    })

    it('pages, leaves expired sessions out and rejects bad paging with a 400 naming the parameter', async () => {
      const first = await list('?size=1&page=1')
      const second = await list('?size=1&page=2')
      expect(first.body.data).toHaveLength(1)
      expect(second.body.data[0].id).not.toBe(first.body.data[0].id)
      expect((await list(`?size=1&page=${first.body.pagination.total_items + 1}`)).body.data).toEqual([])
      const total = first.body.pagination.total_items
      service.clock.advance(3 * MINUTE)
      expect((await list()).body.pagination.total_items).toBeLessThan(total)
      expect((await list('?size=0')).body.errors).toHaveProperty('size')
      expect((await list('?page=x')).status).toBe(400)
      expect((await list('?key=1')).body.errors).toHaveProperty('key')
    })

    it('revokes a session: 204, its key gets 401 at once, and it is no longer listed', async () => {
      const session = await authorizedSession()
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(200)
      const id = (await list()).body.data[0].id
      const response = await service.request('DELETE', `/sessions/${id}`, { key: revoker.key })
      expect(response.status).toBe(204)
      const refused = await service.request('GET', '/tokens/sess-visible', { key: session.session_key })
      expect(refused.status).toBe(401)
      expect((await list()).body.data.map((listed: { id: string }) => listed.id)).not.toContain(id)
      expect((await service.request('DELETE', `/sessions/${id}`, { key: revoker.key })).status).toBe(404)
    })

    it('revokes a pending session, whose nonce then no longer authorizes', async () => {
      const session = await createSession()
      const id = (await list()).body.data[0].id
      expect((await service.request('DELETE', `/sessions/${id.toUpperCase()}`, { key: revoker.key })).status).toBe(204)
      expect((await authorize({ nonce: session.nonce, permissions: ['token:read'] })).status).toBe(404)
    })

    it('answers an unknown, malformed or expired session id with 404', async () => {
      expect((await service.request('DELETE', '/sessions/00000000-0000-4000-8000-000000000000', { key: revoker.key })).status).toBe(404)
      expect((await service.request('DELETE', '/sessions/not-a-uuid', { key: revoker.key })).status).toBe(404)
      await authorizedSession(MINUTE)
      const id = (await list()).body.data[0].id
      service.clock.advance(MINUTE)
      expect((await service.request('DELETE', `/sessions/${id}`, { key: revoker.key })).status).toBe(404)
    })

    it('needs application:read to list and application:delete to revoke (403 otherwise)', async () => {
      const session = await authorizedSession()
      for (const key of [privateApp.key, publicApp.key, revoker.key, session.session_key]) expect((await list('', key)).status).toBe(403)
      const id = (await list()).body.data[0].id
      for (const key of [privateApp.key, lister.key, session.session_key]) {
        expect((await service.request('DELETE', `/sessions/${id}`, { key })).status).toBe(403)
      }
      expect((await service.request('GET', '/sessions', { key: null })).status).toBe(401)
      expect((await service.request('GET', '/tokens/sess-visible', { key: session.session_key })).status).toBe(200)
    })

    it('logs each listed session and each revocation with the management application as actor', async () => {
      await authorizedSession()
      const listed = await list('?size=1')
      const id = listed.body.data[0].id
      expect((await service.request('DELETE', `/sessions/${id}`, { key: revoker.key })).status).toBe(204)
      const logs = await service.request('GET', `/logs?entity_id=${id}`)
      expect(logs.body.data.slice(0, 2)).toEqual([
        expect.objectContaining({ entity_type: 'session', operation: 'delete', actor_id: revoker.id, message: 'Session revoked' }),
        expect.objectContaining({ entity_type: 'session', operation: 'read', actor_id: lister.id, message: 'Session listed' })
      ])
    })
  })

  describe('when an application goes away', () => {
    it('revokes the sessions a deleted public application created and a deleted private application authorized', async () => {
      const creator = await service.createApplication({ name: 'Short-lived page', type: 'public', permissions: ['token:create'] })
      const authorizer = await service.createApplication({ name: 'Short-lived backend', type: 'private', permissions: ['token:read'] })
      const sessionOf = async (publicKey: string) => {
        const created = (await service.request('POST', '/sessions', { key: publicKey })).body
        expect((await authorize({ nonce: created.nonce, permissions: ['token:read'] }, authorizer.key)).status).toBe(204)
        return created.session_key as string
      }
      const first = await sessionOf(creator.key)
      expect((await service.request('GET', '/tokens/sess-visible', { key: first })).status).toBe(200)
      expect((await service.request('DELETE', `/applications/${creator.id}`)).status).toBe(204)
      expect((await service.request('GET', '/tokens/sess-visible', { key: first })).status).toBe(401)

      const second = await sessionOf(publicApp.key)
      expect((await service.request('DELETE', `/applications/${authorizer.id}`)).status).toBe(204)
      expect((await service.request('GET', '/tokens/sess-visible', { key: second })).status).toBe(401)
    })
  })
})
