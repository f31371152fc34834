import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { silentLogger } from '../../src/main/infra/logger'
import { startServiceHost } from '../../src/main/bootstrap/service-host'
import { JobsService, type Sweep } from '../../src/main/app/jobs.service'
import { startTestService, type TestService } from '../helpers/service'
import { sql } from '../../src/main/storage/connections'

const MINUTE = 60_000
const HOUR = 60 * MINUTE

describe('expiry jobs', () => {
  let service: TestService
  let privateKey: string
  let publicKey: string

  beforeAll(async () => {
    service = await startTestService()
    privateKey = (await service.createApplication({ name: 'Backend', type: 'private', permissions: ['token:create', 'token:read'] })).key
    publicKey = (await service.createApplication({ name: 'Browser', type: 'public', permissions: ['token:create'] })).key
    // The first run of every sweep, so each test below starts from a known state.
    await service.host.vault.services.jobs.runDueJobs()
  })
  afterAll(() => service.stop())

  const jobs = () => service.host.vault.services.jobs
  const processed = (results: Array<{ name: string; processed: number }>, name: string) => results.find((result) => result.name === name)?.processed

  async function logsFor(entityType: string, entityId: string) {
    return (await service.request('GET', `/logs?entity_type=${entityType}&entity_id=${encodeURIComponent(entityId)}`)).body.data as Array<Record<string, unknown>>
  }

  it('runs a sweep only when its interval has passed by the injected clock', async () => {
    expect(await jobs().runDueJobs()).toEqual([])
    service.clock.advance(15_000)
    expect((await jobs().runDueJobs()).map((result) => result.name)).toEqual(['deliver-mail', 'deliver-webhooks', 'reencrypt-keys', 'index-logs'])
    service.clock.advance(45_000)
    expect((await jobs().runDueJobs()).map((result) => result.name)).toEqual([
      'expire-tokens',
      'expire-cvc',
      'expire-token-intents',
      'expire-idempotency-keys',
      'expire-applications',
      'expire-sessions',
      'expire-invitations',
      'deliver-mail',
      'deliver-webhooks',
      'reencrypt-keys',
      'index-logs'
    ])
  })

  it('deletes expired tokens within a minute, with a tombstone and a log entry', async () => {
    const expiresAt = new Date(service.clock.now() + HOUR).toISOString()
    const created = await service.request('POST', '/tokens', { key: privateKey, body: { id: 'expiring-token', type: 'token', data: 'bye', expires_at: expiresAt } })
    expect(created.status).toBe(201)
    service.clock.advance(HOUR)
    expect(processed(await jobs().runDueJobs(), 'expire-tokens')).toBe(1)
    expect((await service.request('GET', '/tokens/expiring-token', { key: privateKey })).status).toBe(404)
    const reader = sql(service.host.vault.db.reader)
    expect(await reader('tokens').where({ id: 'expiring-token' }).first()).toBeUndefined()
    expect(await reader('token_tombstones').where({ token_id: 'expiring-token' }).first()).toMatchObject({ reason: 'expired' })
    expect((await logsFor('token', 'expiring-token'))[0]).toMatchObject({ operation: 'delete' })
    expect(processed(await jobs().runDueJobs(), 'expire-tokens')).toBeUndefined()
  })

  it('deletes expired applications and logs it', async () => {
    const app = await service.createApplication({
      name: 'Short-lived',
      type: 'private',
      permissions: ['token:read'],
      expires_at: new Date(service.clock.now() + 10 * MINUTE).toISOString()
    })
    service.clock.advance(10 * MINUTE)
    expect(processed(await jobs().runDueJobs(), 'expire-applications')).toBe(1)
    expect(await sql(service.host.vault.db.reader)('applications').where({ id: app.id }).first()).toBeUndefined()
    expect((await logsFor('application', app.id))[0]).toMatchObject({ operation: 'delete' })
  })

  it('removes expired sessions, authorized or not, and logs it', async () => {
    const unused = await service.request('POST', '/sessions', { key: publicKey })
    const used = await service.request('POST', '/sessions', { key: publicKey })
    await service.request('POST', '/sessions/authorize', { key: privateKey, body: { nonce: used.body.nonce, permissions: ['token:read'] } })
    service.clock.advance(3 * MINUTE)
    expect(processed(await jobs().runDueJobs(), 'expire-sessions')).toBe(2)
    expect(await sql(service.host.vault.db.reader)('sessions').count({ count: '*' }).first()).toEqual({ count: 0 })
    expect((await service.request('GET', '/tokens', { key: used.body.session_key })).status).toBe(401)
    expect((await service.request('GET', '/tokens', { key: unused.body.session_key })).status).toBe(401)
    const logs = (await service.request('GET', '/logs?entity_type=session&size=100')).body.data as Array<Record<string, unknown>>
    expect(logs.filter((entry) => entry.operation === 'expire')).toHaveLength(2)
  })

  it('persists invitation expiry and cancels the waiting mail', async () => {
    const invitation = (await service.request('POST', '/tenants/self/invitations', { body: { email: 'late@example.com' } })).body
    service.clock.advance(72 * HOUR)
    expect(processed(await jobs().runDueJobs(), 'expire-invitations')).toBe(1)
    expect(await sql(service.host.vault.db.reader)('invitations').where({ id: invitation.id }).first()).toMatchObject({ status: 'EXPIRED' })
    expect((await service.host.vault.services.mail.listOutbox({ page: 1, size: 100 })).data.some((mail) => mail.invitation_id === invitation.id)).toBe(false)
    expect((await logsFor('invitation', invitation.id))[0]).toMatchObject({ operation: 'expire', message: 'Invitation expired' })
    // A resend brings it back to PENDING; the sweep leaves it alone until it expires again.
    expect((await service.request('POST', `/tenants/self/invitations/${invitation.id}/resend`)).body.status).toBe('PENDING')
    service.clock.advance(MINUTE)
    expect(processed(await jobs().runDueJobs(), 'expire-invitations')).toBe(0)
  })

  it('waits the retry delay of a sweep that asks for one before running it again after a failure', async () => {
    let calls = 0
    const costly: Sweep = {
      name: 'test-costly',
      intervalMs: 60 * MINUTE,
      retryAfterFailureMs: MINUTE,
      run: async () => {
        calls++
        if (calls === 1) throw Object.assign(new Error('disk full'), { code: 'ENOSPC' })
        return 1
      }
    }
    const own = new JobsService(service.host.vault.services.context, [costly], { close: async () => undefined })
    expect(await own.runDueJobs()).toEqual([{ name: 'test-costly', processed: 0, error: 'ENOSPC' }])
    service.clock.advance(MINUTE - 1)
    expect(await own.runDueJobs()).toEqual([])
    service.clock.advance(1)
    expect(await own.runDueJobs()).toEqual([{ name: 'test-costly', processed: 1 }])
    expect(calls).toBe(2)
    await own.stop()
  })

  it('keeps running the other sweeps when one fails, and retries the failed one next time', async () => {
    let calls = 0
    const failing: Sweep = {
      name: 'test-failing',
      intervalMs: MINUTE,
      run: async () => {
        calls++
        throw Object.assign(new Error('boom with a secret inside'), { code: 'SQLITE_BUSY' })
      }
    }
    const fine: Sweep = { name: 'test-fine', intervalMs: MINUTE, run: async () => 3 }
    const own = new JobsService(service.host.vault.services.context, [failing, fine], { close: async () => undefined })
    expect(await own.runDueJobs()).toEqual([
      { name: 'test-failing', processed: 0, error: 'SQLITE_BUSY' },
      { name: 'test-fine', processed: 3 }
    ])
    expect(await own.runDueJobs()).toEqual([{ name: 'test-failing', processed: 0, error: 'SQLITE_BUSY' }])
    expect(calls).toBe(2)
    expect(await own.status()).toEqual([
      { name: 'test-failing', intervalMs: MINUTE, lastRunAt: null },
      { name: 'test-fine', intervalMs: MINUTE, lastRunAt: service.clock.now() }
    ])
    await own.stop()
    expect(await own.runDueJobs()).toEqual([])
  })

  it('repeats batches until a sweep has caught up', async () => {
    const limits: number[] = []
    let backlog = 1200
    const sweep: Sweep = {
      name: 'test-backlog',
      intervalMs: MINUTE,
      run: async (_now, limit) => {
        limits.push(limit)
        const handled = Math.min(limit, backlog)
        backlog -= handled
        return handled
      }
    }
    const own = new JobsService(service.host.vault.services.context, [sweep], { close: async () => undefined })
    expect(await own.runDueJobs()).toEqual([{ name: 'test-backlog', processed: 1200 }])
    expect(limits).toEqual([500, 500, 500])
  })

  it('looks for due work on each timer tick once started, and not after stop', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    try {
      let calls = 0
      const sweep: Sweep = { name: 'test-ticks', intervalMs: 0, run: async () => ++calls && 0 }
      const own = new JobsService(service.host.vault.services.context, [sweep], { close: async () => undefined })
      own.start(1_000)
      vi.advanceTimersByTime(999)
      await own.runDueJobs()
      expect(calls).toBe(1)
      vi.advanceTimersByTime(1)
      await own.runDueJobs() // queued behind the tick's run
      expect(calls).toBe(3)
      await own.stop()
      vi.advanceTimersByTime(10_000)
      await own.runDueJobs()
      expect(calls).toBe(3)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('expiry jobs across a restart', () => {
  it('resumes from the runs stored in the database and catches up on what expired while stopped', async () => {
    const service = await startTestService()
    try {
      const privateKey = (await service.createApplication({ name: 'Backend', type: 'private', permissions: ['token:create', 'token:read'] })).key
      const publicKey = (await service.createApplication({ name: 'Browser', type: 'public', permissions: ['token:create'] })).key
      await service.host.vault.services.jobs.runDueJobs()
      const before = await service.host.vault.services.jobs.status()
      expect(before.every((job) => job.lastRunAt === service.clock.now())).toBe(true)

      const expiresAt = new Date(service.clock.now() + 30 * MINUTE).toISOString()
      expect((await service.request('POST', '/tokens', { key: privateKey, body: { id: 'outlives-nothing', type: 'token', data: 1, expires_at: expiresAt } })).status).toBe(201)
      expect((await service.request('POST', '/sessions', { key: publicKey })).status).toBe(201)
      await service.host.stop()

      service.clock.advance(HOUR)
      const host = await startServiceHost({
        dataDir: service.dataDir,
        masterKey: service.masterKey,
        host: '127.0.0.1',
        port: 0,
        logger: silentLogger(),
        clock: service.clock,
        jobTickMs: 0
      })
      try {
        const { jobs } = host.vault.services
        expect(await jobs.status()).toEqual(before)
        const results = await jobs.runDueJobs()
        expect(results.find((result) => result.name === 'expire-tokens')?.processed).toBe(1)
        expect(results.find((result) => result.name === 'expire-sessions')?.processed).toBe(1)
        expect((await jobs.status()).every((job) => job.lastRunAt === service.clock.now())).toBe(true)
        expect(await sql(host.vault.db.reader)('tokens').where({ id: 'outlives-nothing' }).first()).toBeUndefined()
      } finally {
        await host.stop()
      }
    } finally {
      await rm(service.dataDir, { recursive: true, force: true })
    }
  })
})
