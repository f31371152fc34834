/**
 * The webhooks IPC channels over a real desktop vault: the GUI lists, gets,
 * creates, replaces and deletes webhooks, reads the event types and a
 * webhook's delivery log, all as the OWNER and with the REST contracts' checks.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { silentLogger } from '../../src/main/infra/logger'
import { TestClock } from '../helpers/clock'
import { startTestDesktop, type TestDesktop } from '../helpers/desktop'

describe('webhooks IPC handlers', () => {
  let started: TestDesktop
  let desktop: DesktopVault
  const logger = silentLogger()
  const call = (channel: string, ...args: unknown[]) => dispatch(createDesktopHandlers(desktop), channel, args, logger)
  const value = async <T = any>(channel: string, ...args: unknown[]): Promise<T> => {
    const result = (await call(channel, ...args)) as { ok: boolean; value: T; problem?: unknown }
    if (!result.ok) throw new Error(JSON.stringify(result.problem))
    return result.value
  }

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1.2.3', clock: new TestClock() })
    desktop = started.desktop
    await value('app:vault.create', { tenantName: 'Acme', ownerEmail: 'owner@example.com', keyStorage: 'key-file' })
  })
  afterAll(() => started.dispose())

  it('creates, lists, gets, replaces and deletes a webhook as the OWNER', async () => {
    const created = await value('app:webhooks.create', { name: 'Local', url: 'http://127.0.0.1:9/hook', events: ['token.created'] })
    expect(created).toMatchObject({ name: 'Local', status: 'enabled', events: ['token.created'], created_by: desktop.actor().id })
    expect((await value('app:webhooks.list', {})).data).toEqual([created])
    expect(await value('app:webhooks.get', created.id)).toEqual(created)
    const replaced = await value('app:webhooks.update', created.id, { name: 'Renamed', url: 'http://127.0.0.1:9/other', events: ['token.deleted'] })
    expect(replaced).toMatchObject({ id: created.id, name: 'Renamed', events: ['token.deleted'], modified_by: desktop.actor().id })
    await value('app:webhooks.delete', created.id)
    expect(await call('app:webhooks.get', created.id)).toMatchObject({ ok: false, problem: { status: 404 } })
  })

  it('refuses what REST refuses, naming the argument field', async () => {
    expect(await call('app:webhooks.create', { name: 'Bad', url: 'http://127.0.0.1:9/hook', events: ['nope'] })).toMatchObject({
      ok: false,
      problem: { status: 400, errors: { 'events[0]': [expect.any(String)] } }
    })
    expect(await call('app:webhooks.deliveries', 'x', { status: 'lost' })).toMatchObject({ ok: false, problem: { status: 400 } })
  })

  it('answers the event types and a webhook’s delivery log', async () => {
    expect(await value('app:webhooks.eventTypes')).toContain('token.created')
    const created = await value('app:webhooks.create', { name: 'Blocked', url: 'http://10.9.9.9/hook', events: ['token.created'] })
    await value('app:tokens.create', { type: 'token', data: 'x' })
    await desktop.requireVault().services.webhookDelivery.deliverDue()
    // The attempt runs in the background once started: the log shows its outcome when it ends.
    await vi.waitFor(async () => {
      const log = await value('app:webhooks.deliveries', created.id, {})
      expect(log.data).toEqual([expect.objectContaining({ event_type: 'token.created', status: 'blocked', attempts: [expect.objectContaining({ outcome: 'blocked', error: 'HOST_NOT_ALLOWED' })] })])
    }, { timeout: 5_000 })
  })
})
