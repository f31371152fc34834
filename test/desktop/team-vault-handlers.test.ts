/**
 * The desktop on a team vault: the IPC handler table, with Electron's keychain
 * mocked, connected to a real `tessera serve` on a fresh PostgreSQL database.
 * Connecting tests the management key, every channel the REST interface
 * offers lands on the server, the embedded vault's own channels say they are
 * not available there, and the keys stay in the keychain, out of every answer.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

vi.mock('electron', async () => (await import('../helpers/safe-storage')).electronWithStandInKeychain())

const { createTeamCredentialStore, TEAM_CONNECTION_FILE } = await import('../../src/main/electron/keychain')
const { memoryTeamCredentialStore, TeamConnection } = await import('../../src/main/desktop/team-connection')
const { createDesktopHandlers } = await import('../../src/main/desktop/handlers')
const { dispatch } = await import('../../src/main/desktop/dispatch')
const { silentLogger } = await import('../../src/main/infra/logger')
const { run, serve, terminate } = await import('../helpers/cli')
const { createTestDatabase, onPostgres } = await import('../helpers/postgres')
const { TestClock } = await import('../helpers/clock')
const { freePort, startTestDesktop } = await import('../helpers/desktop')

type Served = Awaited<ReturnType<typeof serve>>
type Result = { ok: true; value: any } | { ok: false; problem: { status: number; code?: string; detail: string; errors?: Record<string, string[]> } }

const CARD = { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 } }

// Always on PostgreSQL, whichever engine the API suite runs on: run once, in the node project.
describe.skipIf(onPostgres)('the desktop on a team vault', () => {
  const logger = silentLogger()
  const cleanup: (() => Promise<unknown>)[] = []
  const answers: string[] = []
  let server: Served
  let managementKey: string
  let started: Awaited<ReturnType<typeof startTestDesktop>>
  let call: (channel: string, ...args: unknown[]) => Promise<Result>

  /** The handler table as the app builds it: the keychain store of the desktop's data folder. */
  async function handlersOfNewStart() {
    const team = new TeamConnection({ store: await createTeamCredentialStore(started.dataDir), logger, deviceName: 'test-laptop' })
    await team.restore(() => started.desktop.status())
    const handlers = createDesktopHandlers(started.desktop, { team, logger })
    return async (channel: string, ...args: unknown[]) => {
      const result = (await dispatch(handlers, channel, args, logger)) as Result
      answers.push(JSON.stringify(result))
      return result
    }
  }

  const rest = async (path: string) => {
    const response = await fetch(server.url + path, { headers: { 'svc-api-key': managementKey } })
    return { status: response.status, body: (await response.json()) as any }
  }

  beforeAll(async () => {
    const database = await createTestDatabase()
    cleanup.push(database.drop)
    const serverDir = await mkdtemp(join(tmpdir(), 'tessera-team-'))
    cleanup.push(() => rm(serverDir, { recursive: true, force: true }))
    const init = await run(['init', '--data-dir', serverDir, '--database-url', database.url, '--tenant-name', 'Acme Team', '--json'])
    managementKey = (JSON.parse(init.stdout) as { application: { key: string } }).application.key
    server = await serve(serverDir, { TESSERA_DATABASE_URL: database.url, TESSERA_LOG_LEVEL: 'warn' })
    cleanup.unshift(() => terminate(server))
    started = await startTestDesktop({ logger, clock: new TestClock(), version: '1.2.3' })
    cleanup.unshift(() => started.dispose())
    call = await handlersOfNewStart()
  }, 60_000)

  afterAll(async () => {
    for (const step of cleanup) await step()
  })

  it('starts on the embedded vault', async () => {
    expect(await call('app:connection.current')).toEqual({ ok: true, value: { kind: 'embedded' } })
    expect((await call('app:vault.status')) as Result).toMatchObject({ ok: true, value: { state: 'setup' } })
  })

  it('refuses a URL that is not one, plain http to another machine, and a server that does not answer, naming the url', async () => {
    const notUrl = await call('app:connection.connect', { url: 'vault example', key: managementKey })
    expect(notUrl).toMatchObject({ ok: false, problem: { status: 400, errors: { url: [expect.stringMatching(/is not a URL/)] } } })
    const cleartext = await call('app:connection.connect', { url: 'http://vault.example.com', key: managementKey })
    expect(cleartext).toMatchObject({ ok: false, problem: { status: 400, errors: { url: [expect.stringMatching(/https:\/\//)] } } })
    const nobody = await call('app:connection.connect', { url: `http://127.0.0.1:${await freePort()}`, key: managementKey })
    expect(nobody).toMatchObject({ ok: false, problem: { status: 400, errors: { url: [expect.stringMatching(/cannot be reached: the connection was refused/)] } } })
    const empty = await call('app:connection.connect', { url: server.url, key: '' })
    expect(empty).toMatchObject({ ok: false, problem: { status: 400, errors: { 'args[0].key': ['is required'] } } })
    expect(await call('app:connection.current')).toEqual({ ok: true, value: { kind: 'embedded' } })
  })

  it('refuses a key the server does not know, naming the key, and keeps nothing', async () => {
    const refused = await call('app:connection.connect', { url: server.url, key: 'key_management_not-a-real-key' })
    expect(refused).toMatchObject({ ok: false, problem: { status: 400, errors: { key: ['was refused by the team vault'] } } })
    expect(existsSync(join(started.dataDir, TEAM_CONNECTION_FILE))).toBe(false)
  })

  it('connects with the management key, kept only encrypted by the keychain, and shows the team vault', async () => {
    const connected = await call('app:connection.connect', { url: `${server.url}/`, key: managementKey })
    expect(connected).toEqual({ ok: true, value: { kind: 'team', url: server.url, host: new URL(server.url).host, tenantId: expect.any(String), tenantName: 'Acme Team', remembered: true } })
    const kept = await readFile(join(started.dataDir, TEAM_CONNECTION_FILE))
    expect(kept.toString()).not.toContain(managementKey)
    expect(await call('app:vault.status')).toMatchObject({ ok: true, value: { state: 'unlocked', team: { kind: 'team', host: new URL(server.url).host, tenantName: 'Acme Team' } } })
  })

  it('creates and lists tokens on the team server through the IPC contract', async () => {
    const created = await call('app:tokens.create', { ...CARD, metadata: { source: 'desktop' } })
    expect(created).toMatchObject({ ok: true, value: { type: 'card', id: expect.any(String) } })
    const id = (created as { value: { id: string } }).value.id
    const listed = await call('app:tokens.list', { metadata: { source: 'desktop' } })
    expect(listed).toMatchObject({ ok: true, value: { data: [{ id }], pagination: { total_items: 1 } } })
    expect(JSON.stringify(listed)).not.toContain('4242424242424242')
    // The server's own audit trail has it, under the desktop's application.
    const logs = await rest(`/logs?entity_id=${id}`)
    expect(logs.body.data).toEqual(expect.arrayContaining([expect.objectContaining({ operation: 'create', actor_type: 'application' })]))
    const bad = await call('app:tokens.create', { type: 'card', data: { number: '4242424242424241' } })
    expect(bad).toMatchObject({ ok: false, problem: { status: 400, errors: { 'data.number': [expect.any(String)] } } })
  })

  it('answers the management channels from the server with the management key', async () => {
    const applications = await call('app:applications.list', {})
    expect(applications).toMatchObject({ ok: true, value: { data: expect.arrayContaining([expect.objectContaining({ name: 'Tessera desktop (test-laptop)', type: 'private' })]) } })
    expect(await call('app:members.list', {})).toMatchObject({ ok: true, value: { data: [{ role: 'OWNER' }] } })
    expect(await call('app:sessions.list', {})).toMatchObject({ ok: true, value: { data: [], pagination: { total_items: 0 } } })
    expect(await call('app:invitations.create', { email: 'colleague@example.com' })).toMatchObject({ ok: true, value: { email: 'colleague@example.com', status: 'PENDING' } })
    expect(await call('app:invitations.list', {})).toMatchObject({ ok: true, value: { data: [{ email: 'colleague@example.com' }] } })
    expect(await call('app:invitations.create', { email: 'not-an-address' })).toMatchObject({ ok: false, problem: { status: 400, errors: { email: [expect.any(String)] } } })
    const logs = await call('app:logs.list', { entity_type: 'card', size: 5 })
    expect(logs).toMatchObject({ ok: true, value: { data: expect.arrayContaining([expect.objectContaining({ entity_type: 'card' })]) } })
    const now = Date.now()
    const activity = await call('app:logs.activity', { entity_type: 'card' }, [[now - 3_600_000, now + 60_000], [now + 60_000, now + 120_000]])
    expect(activity).toMatchObject({ ok: true, value: [expect.any(Number), 0] })
    expect((activity as { value: number[] }).value[0]).toBeGreaterThanOrEqual(1)
    const exported = await call('app:logs.export', { entity_type: 'card' })
    expect((exported as { value: unknown[] }).value.length).toBeGreaterThanOrEqual(1)
  })

  it('refuses "." and ".." as ids, naming the argument, so no id can turn into another REST operation', async () => {
    // Made over REST: the window would be handed its keys, which the last test checks it never is.
    const post = (path: string, body?: unknown) =>
      fetch(server.url + path, { method: 'POST', headers: { 'svc-api-key': managementKey, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) })
    const created = await post('/applications', { name: 'payments backend', type: 'private', permissions: ['token:read'] })
    const applicationId = ((await created.json()) as { id: string }).id
    expect((await post(`/applications/${applicationId}/keys`)).status).toBe(201)
    const refusal = (argument: string) => ({ ok: false, problem: { status: 400, errors: { [argument]: ['cannot be "." or ".."'] } } })
    // `DELETE /applications/{id}/keys/..` would reach the server as `DELETE /applications/{id}/`: the whole application.
    expect(await call('app:applications.deleteKey', applicationId, '..')).toMatchObject(refusal('args[1]'))
    expect(await call('app:applications.deleteKey', applicationId, '.')).toMatchObject(refusal('args[1]'))
    expect(await call('app:applications.regenerate', '..')).toMatchObject(refusal('args[0]'))
    expect(await call('app:webhooks.delete', '.')).toMatchObject(refusal('args[0]'))
    expect(await call('app:tokens.delete', '..')).toMatchObject(refusal('args[0]'))
    expect(await call('app:applications.get', applicationId)).toMatchObject({ ok: true, value: { id: applicationId } })
    expect((await rest(`/applications/${applicationId}/keys`)).body).toHaveLength(2)
  })

  it('says what is not available on a team vault, and that the CLI on the server does it', async () => {
    for (const [channel, ...args] of [['app:keys.status'], ['app:vault.lock'], ['app:settings.get'], ['app:outbox.list', {}], ['app:logs.archiveStatus'], ['app:tokens.reveal', 'x', 'a reason']] as const) {
      expect(await call(channel, ...args)).toMatchObject({ ok: false, problem: { status: 409, code: 'not_on_team_vault', detail: expect.stringMatching(/not available on a team vault: use the `tessera` CLI on the server/) } })
    }
  })

  it('is back on the team vault at the next start, from the keychain', async () => {
    const again = await handlersOfNewStart()
    expect(await again('app:connection.current')).toMatchObject({ ok: true, value: { kind: 'team', tenantName: 'Acme Team', remembered: true } })
    expect(await again('app:tokens.list', { metadata: { source: 'desktop' } })).toMatchObject({ ok: true, value: { pagination: { total_items: 1 } } })
  })

  it('disconnects: back on the embedded vault, the keys forgotten and the desktop application deleted on the server', async () => {
    expect(await call('app:connection.disconnect')).toEqual({ ok: true, value: { kind: 'embedded' } })
    expect(existsSync(join(started.dataDir, TEAM_CONNECTION_FILE))).toBe(false)
    expect(await call('app:tokens.list', {})).toMatchObject({ ok: false, problem: { status: 503, code: 'vault_locked' } })
    const applications = await rest('/applications')
    expect(applications.body.data.map((application: { name: string }) => application.name)).not.toContain('Tessera desktop (test-laptop)')
  })

  it('still starts on a remembered team vault that does not answer, and says so', async () => {
    const store = memoryTeamCredentialStore()
    const url = `http://127.0.0.1:${await freePort()}`
    await store.save({ url, managementKey: 'key_management_x', tokenKey: 'key_private_x', tokenApplicationId: '00000000-0000-4000-8000-000000000000' })
    const team = new TeamConnection({ store, logger })
    expect(await team.restore(() => started.desktop.status())).toMatchObject({ kind: 'team', url, error: expect.stringMatching(/cannot be reached: the connection was refused/) })
    const handlers = createDesktopHandlers(started.desktop, { team, logger })
    expect(await dispatch(handlers, 'app:tokens.list', [{}], logger)).toMatchObject({
      ok: false,
      problem: { status: 503, detail: `The team vault at ${new URL(url).host} cannot be reached: the connection was refused.` }
    })
  })

  it('never hands a key back to the window', () => {
    for (const answer of answers) expect(answer).not.toContain(managementKey)
    expect(answers.join('\n')).not.toMatch(/key_(private|management)_/)
  })
})
