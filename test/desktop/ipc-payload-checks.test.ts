/**
 * What the IPC door refuses before it reaches the vault, as REST does: list
 * filters with more values than the largest page, payloads holding a
 * `__proto__` key, and reveal reasons nobody can read.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DesktopVault } from '../../src/main/desktop/desktop-vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { silentLogger } from '../../src/main/infra/logger'
import { TestClock } from '../helpers/clock'
import { startTestDesktop, type TestDesktop } from '../helpers/desktop'

describe('IPC payload checks', () => {
  let started: TestDesktop
  let desktop: DesktopVault
  const logger = silentLogger()
  const call = (channel: string, ...args: unknown[]) => dispatch(createDesktopHandlers(desktop), channel, args, logger)

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1.2.3', clock: new TestClock() })
    desktop = started.desktop
    expect(await call('app:vault.create', { tenantName: 'Acme', ownerEmail: 'owner@example.com', keyStorage: 'key-file' })).toMatchObject({ ok: true })
  })

  afterAll(() => started.dispose())

  describe('list filters', () => {
    it.each([
      ['app:tokens.list', 'id', () => 'a'],
      ['app:tokens.list', 'type', () => 'token'],
      ['app:applications.list', 'id', () => randomUUID()],
      ['app:members.list', 'user_id', () => randomUUID()]
    ])('%s refuses a very long %s filter with a 400 naming it, and takes 100 values', async (channel, name, value) => {
      expect(await call(channel, { [name]: Array.from({ length: 32766 }, value) })).toEqual({
        ok: false,
        problem: expect.objectContaining({ status: 400, code: 'validation_failed', errors: { [`args[0].${name}`]: ['must list at most 100 values'] } })
      })
      expect(await call(channel, { [name]: Array.from({ length: 101 }, value) })).toMatchObject({ ok: false, problem: { status: 400 } })
      expect(await call(channel, { [name]: Array.from({ length: 100 }, value) })).toMatchObject({ ok: true })
    })
  })
})
