import { readFile } from 'node:fs/promises'
import { Agent, get } from 'node:http'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { memoryClipboard, SecretClipboard } from '../../src/main/desktop/secret-clipboard'
import { silentLogger } from '../../src/main/infra/logger'
import type { LogEntry } from '../../src/shared/types'
import { TestClock } from '../helpers/clock'
import { freePort, startTestDesktop, type TestDesktop } from '../helpers/desktop'

describe('desktop IPC handlers over a real vault', () => {
  let started: TestDesktop
  let desktop: DesktopVault
  const logger = silentLogger()
  const clock = new TestClock()
  const call = (channel: string, ...args: unknown[]) => dispatch(createDesktopHandlers(desktop), channel, args, logger)
  const newestEntry = async (entityType: string) =>
    ((await call('app:logs.list', { entity_type: entityType, size: 1 })) as { value: { data: LogEntry[] } }).value.data[0]

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1.2.3', clock })
    desktop = started.desktop
  })

  afterAll(() => started.dispose())

  it('starts on the first-run screen and refuses domain calls with a 503', async () => {
    expect(await call('app:vault.status')).toMatchObject({ ok: true, value: { state: 'setup', service: { running: false } } })
    expect(await call('app:tokens.list', {})).toMatchObject({ ok: false, problem: { status: 503, code: 'vault_locked' } })
  })

  it('refuses keychain mode where there is no keychain', async () => {
    const result = await call('app:vault.create', { tenantName: 'Acme', keyStorage: 'keychain' })
    expect(result).toMatchObject({ ok: false, problem: { status: 400, errors: { keyStorage: [expect.any(String)] } } })
  })

  it('refuses an owner e-mail that is not an address, as tessera init and invitations do', async () => {
    const result = await call('app:vault.create', { tenantName: 'Acme', ownerEmail: 'not-an-email', keyStorage: 'key-file' })
    expect(result).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].ownerEmail': [expect.stringMatching(/well-formed e-mail address/)] } } })
  })

  it('creates the vault, unlocks it, serves REST on loopback and returns the management key once', async () => {
    const result = await call('app:vault.create', { tenantName: 'Acme', ownerEmail: 'owner@example.com', keyStorage: 'key-file' })
    expect(result).toMatchObject({
      ok: true,
      value: { status: { state: 'unlocked', keyStorage: 'key-file', service: { running: true, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) } }, application: { key: expect.stringMatching(/^key_management/) } }
    })
    expect(await call('app:vault.create', { tenantName: 'Again', keyStorage: 'key-file' })).toMatchObject({ ok: false, problem: { status: 409 } })
  })

  it('runs every GUI action as the OWNER, so it lands in the audit log under that user', async () => {
    const created = await call('app:tokens.create', { type: 'card', data: { number: '4242424242424242' } })
    expect(created).toMatchObject({ ok: true, value: { type: 'card' } })
    const id = (created as { value: { id: string } }).value.id
    const revealed = await call('app:tokens.reveal', id, 'Chargeback 77')
    expect(revealed).toMatchObject({ ok: true, value: { data: { number: '4242424242424242' } } })
    const logs = (await call('app:logs.list', { entity_id: id })) as { value: { data: { actor_id: string; actor_type: string; message: string }[] } }
    const owner = desktop.actor().id
    expect(logs.value.data.map((entry) => entry.message)).toEqual(['Token revealed: Chargeback 77', 'Token created'])
    expect(logs.value.data.every((entry) => entry.actor_id === owner && entry.actor_type === 'user')).toBe(true)
    // No REST request, no trace id.
    expect(logs.value.data.every((entry) => !('trace_id' in entry))).toBe(true)
  })

  it('logs a GUI mask change that shows the data as is like a reveal, and refuses a card mask beyond the PCI maximum', async () => {
    const created = (await call('app:tokens.create', { type: 'token', data: { pin: '8264' }, mask: { pin: '{{ data.pin | reveal_last: 1 }}' } })) as { value: { id: string } }
    const id = created.value.id
    expect(await call('app:tokens.update', id, { mask: { pin: 'hidden' } })).toMatchObject({ ok: true, value: { data: { pin: 'hidden' } } })
    expect(await call('app:tokens.update', id, { mask: { pin: '{{ data.pin }}' } })).toMatchObject({ ok: true, value: { data: { pin: '8264' } } })
    const logs = (await call('app:logs.list', { entity_id: id })) as { value: { data: { operation: string; message: string; actor_id: string }[] } }
    expect(logs.value.data.map((entry) => [entry.operation, entry.message])).toEqual([
      ['reveal', 'Token revealed: mask.pin changed to show the data as is'],
      ['update', 'Token updated'],
      ['update', 'Token updated'],
      ['create', 'Token created']
    ])
    expect(logs.value.data[0].actor_id).toBe(desktop.actor().id)

    const card = (await call('app:tokens.create', { type: 'card', data: { number: '4242424242424242', cvc: '123' } })) as { value: { id: string } }
    const refused = await call('app:tokens.update', card.value.id, { mask: { n: '{{ data.number }}', c: '{{ data.cvc }}' } })
    expect(refused).toMatchObject({ ok: false, problem: { status: 400, errors: { 'mask.n': [expect.any(String)], 'mask.c': [expect.any(String)] } } })
    expect(JSON.stringify(refused)).not.toContain('4242424242424242')
  })

  it('lists tokens masked, filtered by type and metadata', async () => {
    await call('app:tokens.create', { type: 'token', data: 'secret', metadata: { team: 'risk' } })
    const page = (await call('app:tokens.list', { metadata: { team: 'risk' }, type: ['token'], size: 5 })) as { ok: true; value: any }
    expect(page.value.pagination).toMatchObject({ total_items: 1, page_size: 5 })
    expect(page.value.data[0].data).toBeUndefined()
  })

  it('refuses a metadata filter named __proto__, as any payload holding that key', async () => {
    expect(await call('app:tokens.list', { metadata: JSON.parse('{"__proto__": "risk"}') })).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].metadata.__proto__': [expect.any(String)] } } })
    expect(await call('app:tokens.list', { metadata: { team: 1 } })).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].metadata.team': [expect.any(String)] } } })
    expect(await call('app:tokens.list', { metadata: 'team' })).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].metadata': [expect.any(String)] } } })
  })

  it('checks list queries with the REST contracts: numbers and arrays as the GUI holds them, the same bounds and messages', async () => {
    const page = (await call('app:tokens.list', { page: 1, size: 2, type: ['token'], id: [] })) as { ok: true; value: any }
    expect(page.value.pagination).toMatchObject({ page_number: 1, page_size: 2 })
    expect(page.value.data.every((token: { type: string }) => token.type === 'token')).toBe(true)
    expect(await call('app:tokens.list', { size: 101 })).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].size': ['must be at most 100'] } } })
    expect(await call('app:tokens.list', { page: 1.5 })).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].page': ['must be a whole number'] } } })
    expect(await call('app:logs.list', { start_date: 'yesterday' })).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].start_date': ['start_date must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC'] } } })
  })

  it('passes the service problem through, field errors included', async () => {
    const result = await call('app:tokens.create', { type: 'card', data: { number: '4242424242424241' } })
    expect(result).toMatchObject({ ok: false, problem: { status: 400, errors: { 'data.number': ['fails the Luhn check'] } } })
  })

  it('adds, lists and deletes application keys as the owner, each change logged', async () => {
    const app = (await call('app:applications.create', { name: 'Rotated', type: 'private', permissions: ['token:read'] })) as { value: { id: string; keys: { id: string }[] } }
    const added = (await call('app:applications.createKey', app.value.id)) as { ok: true; value: { id: string; key: string } }
    expect(added.value.key).toMatch(/^key_private_/)
    const listed = (await call('app:applications.listKeys', app.value.id)) as { ok: true; value: { id: string; key?: string }[] }
    expect(listed.value.map((key) => key.id).sort()).toEqual([app.value.keys[0].id, added.value.id].sort())
    expect(listed.value.every((key) => key.key === undefined)).toBe(true)
    expect(await call('app:applications.deleteKey', app.value.id, app.value.keys[0].id)).toEqual({ ok: true })
    expect(((await call('app:applications.listKeys', app.value.id)) as { value: { id: string }[] }).value.map((key) => key.id)).toEqual([added.value.id])
    expect(await call('app:applications.deleteKey', app.value.id)).toMatchObject({ ok: false, problem: { status: 400 } })
    const logs = (await call('app:logs.list', { entity_type: 'application', entity_id: app.value.id })) as { value: { data: LogEntry[] } }
    expect(logs.value.data.map((entry) => [entry.actor_type, entry.message])).toEqual(
      expect.arrayContaining([
        ['user', `Application key ${added.value.id} created`],
        ['user', `Application key ${app.value.keys[0].id} deleted`]
      ])
    )
  })

  it('creates sessions as a public application and authorizes them as a private one', async () => {
    const publicApp = (await call('app:applications.create', { name: 'Form', type: 'public', permissions: ['token:create'] })) as { value: { id: string } }
    const privateApp = (await call('app:applications.create', { name: 'Backend', type: 'private', permissions: ['token:create'] })) as { value: { id: string } }
    expect(await call('app:sessions.create', privateApp.value.id)).toMatchObject({ ok: false, problem: { status: 422 } })
    const session = (await call('app:sessions.create', publicApp.value.id)) as { ok: true; value: { nonce: string; session_key: string } }
    expect(session.value.session_key).toMatch(/^key_sess/)
    expect(await call('app:sessions.authorize', privateApp.value.id, { nonce: session.value.nonce, permissions: ['token:create'] })).toEqual({ ok: true })
    // The person did it, through the applications: the log names the OWNER user.
    const logs = (await call('app:logs.list', { entity_type: 'session' })) as { value: { data: LogEntry[] } }
    const owner = desktop.actor().id
    expect(logs.value.data.map((entry) => [entry.operation, entry.actor_type, entry.actor_id, entry.message])).toEqual([
      ['authorize', 'user', owner, `Session authorized through application ${privateApp.value.id}`],
      ['create', 'user', owner, `Session created through application ${publicApp.value.id}`]
    ])
  })

  it('logs reading the log, the activity chart and the CSV export as the OWNER, one entry each', async () => {
    const owner = desktop.actor().id
    const newest = async () => ((await call('app:logs.list', { entity_type: 'log', size: 3 })) as { value: { data: LogEntry[] } }).value.data
    const day = Date.UTC(2026, 10, 25)
    const counts = (await call('app:logs.activity', { entity_type: 'card' }, [[day, day + 86_400_000], [day + 86_400_000, day + 2 * 86_400_000]])) as { value: number[] }
    expect(counts.value).toEqual([expect.any(Number), expect.any(Number)])
    const exported = (await call('app:logs.export', { entity_type: 'card' })) as { value: LogEntry[] }
    expect(exported.value.length).toBeGreaterThan(0)
    expect(exported.value.every((entry) => entry.entity_type === 'card')).toBe(true)
    const [exportEntry, activityEntry] = await newest()
    expect(exportEntry).toMatchObject({ actor_id: owner, actor_type: 'user', operation: 'export', message: `Audit log exported: ${exported.value.length} entries, filtered by entity type card` })
    expect(activityEntry).toMatchObject({ actor_id: owner, operation: 'read', message: 'Audit log activity counted over 2 periods, filtered by entity type card' })
    // The list call just made is itself the newest entry now.
    expect((await newest())[0]).toMatchObject({ actor_id: owner, operation: 'read', message: expect.stringMatching(/^Audit log listed: page 1, 3 of \d+ entries, filtered by entity type log$/) })
    expect(await call('app:logs.activity', {}, [[5, 1]])).toMatchObject({ ok: false, problem: { status: 400 } })
  })

  it('lists the active sessions and revokes one, whose key REST then refuses; both logged under the OWNER', async () => {
    const publicApp = (await call('app:applications.create', { name: 'Form 2', type: 'public', permissions: ['token:create'] })) as { value: { id: string } }
    const privateApp = (await call('app:applications.create', { name: 'Backend 2', type: 'private', permissions: ['token:create'] })) as { value: { id: string } }
    clock.advance(1000) // newest first: after the sessions of earlier tests
    const session = (await call('app:sessions.create', publicApp.value.id)) as { value: { id: string; nonce: string; session_key: string } }
    await call('app:sessions.authorize', privateApp.value.id, { nonce: session.value.nonce, permissions: ['token:create'] })
    const url = (await desktop.status()).service.url!
    const createToken = () =>
      fetch(`${url}/tokens`, { method: 'POST', headers: { 'svc-api-key': session.value.session_key, 'content-type': 'application/json' }, body: '{"type":"token","data":"x"}' })
    expect((await createToken()).status).toBe(201)

    const listed = (await call('app:sessions.list', { size: 1 })) as { ok: true; value: { data: { id: string; status: string; authorized_by: string }[] } }
    expect(listed.value.data).toEqual([expect.objectContaining({ status: 'AUTHORIZED', application_id: publicApp.value.id, authorized_by: privateApp.value.id })])
    expect(JSON.stringify(listed)).not.toContain(session.value.session_key)
    const id = listed.value.data[0].id
    expect(id).toBe(session.value.id)
    expect(await call('app:sessions.revoke', id)).toEqual({ ok: true })
    expect((await createToken()).status).toBe(401)
    expect(await call('app:sessions.revoke', id)).toMatchObject({ ok: false, problem: { status: 404 } })
    expect(await call('app:sessions.list', { size: 1, session: 'x' })).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].session': [expect.any(String)] } } })

    const logs = (await call('app:logs.list', { entity_id: id })) as { value: { data: { actor_id: string; message: string }[] } }
    expect(logs.value.data.slice(0, 2)).toEqual([
      expect.objectContaining({ actor_id: desktop.actor().id, message: 'Session revoked' }),
      expect.objectContaining({ actor_id: desktop.actor().id, message: 'Session listed' })
    ])
  })

  it('invites a member and shows the mail in the outbox without its body', async () => {
    await call('app:invitations.create', { email: 'grace@example.com' })
    const outbox = (await call('app:outbox.list', { status: 'PENDING' })) as { ok: true; value: any }
    expect(outbox.value.data[0]).toMatchObject({ recipient: 'grace@example.com', status: 'PENDING', link: expect.stringContaining('/invitations/') })
    expect(outbox.value.data[0]).not.toHaveProperty('text')
    expect(outbox.value.data[0]).not.toHaveProperty('html')
  })

  it('applies the idle lock and the audit retention without restarting the service: a local application stays connected', async () => {
    // One kept-alive connection, as a local application's HTTP client holds: a restart would drop it.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const health = (url: string) =>
      new Promise<{ status: number; sameConnection: boolean }>((resolve, reject) => {
        const request = get(`${url}/health`, { agent }, (response) => {
          response.resume()
          response.on('end', () => resolve({ status: response.statusCode!, sameConnection: request.reusedSocket }))
        })
        request.on('error', reject)
      })
    try {
      const url = (await desktop.status()).service.url!
      expect(await health(url)).toEqual({ status: 200, sameConnection: false })
      const vault = desktop.requireVault()
      expect(await call('app:settings.update', { idleLockMinutes: 7 })).toMatchObject({ ok: true, value: { idleLockMinutes: 7 } })
      expect(await call('app:settings.update', { auditRetentionDays: 400 })).toMatchObject({ ok: true, value: { auditRetentionDays: 400 } })
      expect(await health(url)).toEqual({ status: 200, sameConnection: true })
      expect(desktop.requireVault()).toBe(vault)
      expect(await newestEntry('settings')).toMatchObject({ message: 'Audit retention changed from for ever to 400 days' })

      // The link URL is read as the mailer is built: it restarts the service, on the same port.
      expect(await call('app:settings.update', { publicBaseUrl: 'https://vault.example.com' })).toMatchObject({ ok: true })
      expect(desktop.requireVault()).not.toBe(vault)
      expect((await desktop.status()).service.url).toBe(url)
      expect((await health(url)).status).toBe(200)
    } finally {
      agent.destroy()
      await call('app:settings.update', { idleLockMinutes: 15, auditRetentionDays: 0, publicBaseUrl: null })
    }
  })

  it('moves the service to a free port, and stays on the old one (409) when the new one is taken', async () => {
    const before = (await desktop.status()).service.url!
    const previous = desktop.settings.port
    const port = await freePort()
    expect(await call('app:settings.update', { port })).toMatchObject({ ok: true, value: { port } })
    expect((await desktop.status()).service.url).toBe(`http://127.0.0.1:${port}`)
    expect(before).not.toBe(`http://127.0.0.1:${port}`)
    expect(await newestEntry('settings')).toMatchObject({ actor_id: desktop.actor().id, actor_type: 'user', operation: 'update', message: `Service port changed from ${previous} to ${port}` })

    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const taken = (blocker.address() as AddressInfo).port
    try {
      expect(await call('app:settings.update', { port: taken })).toMatchObject({ ok: false, problem: { status: 409 } })
      expect((await desktop.status()).service.url).toBe(`http://127.0.0.1:${port}`)
      expect(desktop.settings.port).toBe(port)
      expect(await newestEntry('settings')).toMatchObject({ message: `Service port changed back to ${port} (port ${taken} is in use)` })
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })

  it('drops the SMTP password when the host changes and writes the change to the audit log under the OWNER', async () => {
    const smtp = { host: 'smtp.example.com', port: 587, secure: false, user: 'vault', from: 'vault@example.com' }
    expect(await call('app:settings.update', { smtp: { ...smtp, password: 'hunter2' } })).toMatchObject({ ok: true, value: { smtp: { hasPassword: true, requireTLS: true } } })
    const moved = await call('app:settings.update', { smtp: { ...smtp, host: 'smtp.elsewhere.example', hasPassword: true } })
    expect(moved).toMatchObject({ ok: true, value: { smtp: { host: 'smtp.elsewhere.example', hasPassword: false } } })
    const logs = (await call('app:logs.list', { entity_type: 'settings' })) as { value: { data: { actor_id: string; operation: string; message: string }[] } }
    expect(logs.value.data.slice(0, 2)).toEqual([
      expect.objectContaining({ actor_id: desktop.actor().id, operation: 'update', message: expect.stringContaining('stored password dropped') }),
      expect.objectContaining({ actor_id: desktop.actor().id, message: 'SMTP settings added (host smtp.example.com)' })
    ])
    expect(JSON.stringify(logs)).not.toContain('hunter2')
  })

  it('refuses a hostile SMTP host or From and a link URL with credentials, control characters or another scheme: 400 naming the field, nothing saved or audited', async () => {
    const file = () => readFile(desktop.settings.file, 'utf8')
    const auditedSettings = async () =>
      ((await call('app:logs.list', { entity_type: 'settings', size: 1 })) as { value: { pagination: { total_items: number } } }).value.pagination.total_items
    const smtp = { host: 'smtp.elsewhere.example', port: 587, secure: false, user: 'vault', from: 'vault@example.com' }
    const before = { view: desktop.settings.view(), file: await file(), audited: await auditedSettings() }
    const refusals: [unknown, string, RegExp][] = [
      [{ smtp: { host: 'a\u0000b\r\nX', port: 25, secure: false, from: 'vault@example.com' } }, 'smtp.host', /host name or an IP address/],
      [{ smtp: { ...smtp, host: 'smtp.example.com\r\nRCPT TO:<a@b.c>' } }, 'smtp.host', /host name or an IP address/],
      [{ smtp: { ...smtp, host: 'smtp example.com' } }, 'smtp.host', /host name or an IP address/],
      [{ smtp: { ...smtp, from: 'x\r\nBcc: a@b.c' } }, 'smtp.from', /e-mail address/],
      [{ smtp: { ...smtp, from: 'not an address' } }, 'smtp.from', /e-mail address/],
      // A folded header line is a mailbox to the parser, but not one line.
      [{ smtp: { ...smtp, from: 'Tessera\r\n <vault@example.com>' } }, 'smtp.from', /control characters/],
      [{ publicBaseUrl: 'http://a\u0000b' }, 'publicBaseUrl', /control characters/],
      [{ publicBaseUrl: 'https://vault.example.com\r\nX' }, 'publicBaseUrl', /control characters/],
      [{ publicBaseUrl: 'http://user:hunter2@example.com' }, 'publicBaseUrl', /without user name or password/],
      [{ publicBaseUrl: 'http://user@example.com' }, 'publicBaseUrl', /without user name or password/],
      [{ publicBaseUrl: 'ftp://vault.example.com' }, 'publicBaseUrl', /http or https URL/],
      [{ publicBaseUrl: 'javascript:alert(1)' }, 'publicBaseUrl', /http or https URL/],
      [{ publicBaseUrl: 'https://vault.example.com/?token=x' }, 'publicBaseUrl', /query or fragment/]
    ]
    for (const [patch, field, message] of refusals) {
      const result = await call('app:settings.update', patch)
      expect.soft(result, JSON.stringify(patch)).toMatchObject({ ok: false, problem: { status: 400, errors: { [field]: expect.arrayContaining([expect.stringMatching(message)]) } } })
      expect.soft(JSON.stringify(result)).not.toContain('hunter2')
    }
    expect(desktop.settings.view()).toEqual(before.view)
    expect(await file()).toBe(before.file)
    expect(await auditedSettings()).toBe(before.audited)

    // Valid values still work: a From with a name, an IP host, a link URL with a path.
    expect(await call('app:settings.update', { smtp: { ...smtp, host: '10.0.0.5', from: 'Tessera <vault@example.com>' } })).toMatchObject({
      ok: true,
      value: { smtp: { host: '10.0.0.5', from: 'Tessera <vault@example.com>' } }
    })
    expect(await call('app:settings.update', { smtp: { ...smtp, hasPassword: false } })).toMatchObject({ ok: true, value: { smtp: { host: 'smtp.elsewhere.example' } } })
    expect(await call('app:settings.update', { publicBaseUrl: 'http://127.0.0.1:8080/vault/' })).toMatchObject({ ok: true, value: { publicBaseUrl: 'http://127.0.0.1:8080/vault/' } })
    expect(await newestEntry('settings')).toMatchObject({ message: 'Invitation link URL set to http://127.0.0.1:8080/vault/' })
    expect(await call('app:settings.update', { publicBaseUrl: null })).toMatchObject({ ok: true })
    expect(await auditedSettings()).toBe(before.audited + 4)
  })

  it('locks (service stopped, keys dropped) and unlocks with the stored key, logging both as the OWNER', async () => {
    const owner = desktop.actor().id
    expect(await call('app:vault.lock')).toMatchObject({ ok: true, value: { state: 'locked', service: { running: false } } })
    expect(await call('app:tokens.list', {})).toMatchObject({ ok: false, problem: { status: 503 } })
    // Unaudited while locked, so refused, and nothing is saved.
    expect(await call('app:settings.update', { smtp: null })).toMatchObject({ ok: false, problem: { status: 503 } })
    // The port can still change (to unlock on a free one); the change is logged at the next unlock.
    const previous = desktop.settings.port
    const port = await freePort()
    expect(await call('app:settings.update', { port })).toMatchObject({ ok: true, value: { port } })
    expect(await call('app:vault.unlock')).toMatchObject({ ok: true, value: { state: 'unlocked', service: { url: `http://127.0.0.1:${port}` } } })
    expect(desktop.settings.view().smtp).toMatchObject({ host: 'smtp.elsewhere.example' })
    const entries = ((await call('app:logs.list', { size: 3 })) as { value: { data: LogEntry[] } }).value.data
    expect(entries.map((entry) => [entry.entity_type, entry.operation, entry.actor_id, entry.message])).toEqual([
      ['settings', 'update', owner, `Service port changed from ${previous} to ${port} (while the vault was locked)`],
      ['vault', 'unlock', owner, 'Vault unlocked in the desktop app'],
      ['vault', 'lock', owner, 'Vault locked in the desktop app']
    ])
  })

  it('copies a secret to the clipboard it was given, refusing anything but a non-empty string', async () => {
    const clipboard = memoryClipboard()
    const handlers = createDesktopHandlers(desktop, { clipboard: new SecretClipboard(clipboard) })
    expect(await dispatch(handlers, 'app:clipboard.copySecret', ['key_private_copied'], logger)).toEqual({ ok: true })
    expect(await clipboard.readText()).toBe('key_private_copied')
    for (const bad of [[''], [42], []]) {
      expect(await dispatch(handlers, 'app:clipboard.copySecret', bad, logger)).toMatchObject({ ok: false, problem: { status: 400 } })
    }
    expect(await clipboard.readText()).toBe('key_private_copied')
  })

  it('answers an unknown channel with a 404 problem', async () => {
    expect(await call('app:tokens.drop')).toMatchObject({ ok: false, problem: { status: 404, code: 'unknown_channel' } })
    expect(await call('tokens.list')).toMatchObject({ ok: false, problem: { status: 404 } })
    expect(await call('app:__proto__.constructor')).toMatchObject({ ok: false, problem: { status: 404 } })
  })
})
