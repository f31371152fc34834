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

  /** As the renderer's payload arrives: Electron's structured clone keeps an own `__proto__` key. */
  const sent = (json: string) => structuredClone(JSON.parse(json) as unknown)
  const tokenCount = async () => ((await call('app:tokens.list', {})) as { value: { pagination: { total_items: number } } }).value.pagination.total_items
  const POISONED = '{"__proto__":{"type":"token","data":"a"},"b":"secret-b","c":{"type":"token","data":"c"}}'

  describe('__proto__ keys', () => {
    it.each([
      ['app:tokenize.run', [POISONED], 'args[0].__proto__'],
      ['app:tokenize.run', ['[{"b":"x"},{"c":[1,{"__proto__":null}]}]'], 'args[0][1].c[1].__proto__'],
      ['app:tokens.create', ['{"type":"token","data":{"x":{"__proto__":{"admin":true}}}}'], 'args[0].data.x.__proto__'],
      ['app:tokens.update', ['"tok"', '{"metadata":{"__proto__":"x"}}'], 'args[1].metadata.__proto__'],
      ['app:tokens.list', ['{"metadata":{"__proto__":"risk"}}'], 'args[0].metadata.__proto__']
    ])('%s refuses a payload holding one with a 400 naming where it is, and stores nothing', async (channel, payloads, where) => {
      const before = await tokenCount()
      expect(await call(channel, ...payloads.map(sent))).toEqual({
        ok: false,
        problem: expect.objectContaining({ status: 400, code: 'validation_failed', errors: { [where]: ['is a reserved key: a payload must not hold a __proto__ key'] } })
      })
      expect(await tokenCount()).toBe(before)
    })

    it('still takes "__proto__" as a value, and keys that only look like it', async () => {
      const result = await call('app:tokenize.run', sent('{"proto":"__proto__","__proto":"x","constructor":"y"}'))
      expect(result).toMatchObject({ ok: true, value: { proto: expect.any(String), __proto: expect.any(String), constructor: expect.any(String) } })
    })

    it('tokenize answers every token of a body holding a __proto__ key (through the service: REST and IPC refuse such a body first)', async () => {
      const before = await tokenCount()
      const response = (await desktop.requireVault().services.tokenize.run(desktop.actor(), sent(POISONED))) as Record<string, unknown>
      expect(await tokenCount()).toBe(before + 3)
      expect(Object.getPrototypeOf(response)).toBe(Object.prototype)
      expect(Object.keys(response)).toEqual(['__proto__', 'b', 'c'])
      const own = (key: string) => Object.getOwnPropertyDescriptor(response, key)?.value as Record<string, unknown>
      expect(own('__proto__')).toMatchObject({ type: 'token', id: expect.any(String) })
      expect(typeof own('b')).toBe('string')
      expect(own('c')).toMatchObject({ type: 'token', id: expect.any(String) })
      expect(new Set([own('__proto__').id, own('b'), own('c').id]).size).toBe(3)
      expect(JSON.stringify(response)).toMatch(/^\{"__proto__":\{[^{}]*"type":"token"/)
    })
  })

  describe('reveal reasons', () => {
    const revealLogs = async (id: string) =>
      ((await call('app:logs.list', { entity_id: id })) as { value: { data: { operation: string; message: string }[] } }).value.data.filter((entry) => entry.operation === 'reveal')

    it.each([
      ['control characters only', '\u0001\u0002\u0003', /control characters/],
      ['zero-width spaces only', '\u200b\u200b\u200b', /invisible formatting characters/],
      ['a line break inside', 'Ticket 1\r\nToken revealed: forged', /control characters/],
      ['a line separator inside', 'Ticket 1\u2028forged', /invisible formatting characters/],
      ['a C1 control inside', 'Ticket\u0085 1', /control characters/],
      ['a bidi override inside', 'Ticket \u202e1', /invisible formatting characters/],
      ['two visible characters and spaces', '  a b  ', /at least 3 visible characters/],
      ['blank letters and combining marks', '\u3164\u3164\u0301\u0301\u2800', /at least 3 visible characters/]
    ])('refuses a reason of %s with a 400 naming reason, reveals nothing and logs nothing', async (_, reason, message) => {
      const created = (await call('app:tokens.create', { type: 'token', data: 'plain-secret' })) as { value: { id: string } }
      const result = await call('app:tokens.reveal', created.value.id, reason)
      expect(result).toEqual({ ok: false, problem: expect.objectContaining({ status: 400, errors: { reason: expect.arrayContaining([expect.stringMatching(message)]) } }) })
      expect(JSON.stringify(result)).not.toContain('plain-secret')
      expect(await revealLogs(created.value.id)).toEqual([])
    })

    it('takes three visible characters, in any script, trimmed', async () => {
      const created = (await call('app:tokens.create', { type: 'token', data: 'plain-secret' })) as { value: { id: string } }
      expect(await call('app:tokens.reveal', created.value.id, '  工单 7  ')).toMatchObject({ ok: true, value: { data: 'plain-secret' } })
      expect((await revealLogs(created.value.id)).map((entry) => entry.message)).toEqual(['Token revealed: 工单 7'])
    })
  })

  describe('dates', () => {
    it.each([
      ['app:logs.list', { start_date: '2026-02-30' }, 'args[0].start_date', 'start_date names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
      ['app:logs.list', { end_date: '2026-11-29T03:53:25' }, 'args[0].end_date', 'end_date must state its time zone: add Z (UTC) or an offset such as +01:00 after the time, as in 2026-11-01T12:00:00Z'],
      ['app:logs.export', { start_date: '2026-11-01 (x)' }, 'args[0].start_date', 'start_date must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC'],
      ['app:logs.archive', '2026-02-30', 'args[0]', 'names a day or time that does not exist (such as February 30, month 13 or hour 24)'],
      ['app:logs.archive', '2026-11-29T03:53:25', 'args[0]', 'must state its time zone: add Z (UTC) or an offset such as +01:00 after the time, as in 2026-11-01T12:00:00Z']
    ])('%s refuses %j with a 400 naming it', async (channel, payload, where, message) => {
      expect(await call(channel, payload)).toEqual({ ok: false, problem: expect.objectContaining({ status: 400, errors: { [where]: [message] } }) })
    })
  })

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
