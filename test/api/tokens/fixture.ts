/**
 * What the tokens API tests share: one service per test file, with an
 * application of each kind of access, and small request helpers. The values
 * are live bindings, set when the file's `useTokensService()` hook has run.
 */
import { afterAll, beforeAll, expect } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'
import { cardNumber, MERGE_PATCH } from '../../helpers/tokens'

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const FINGERPRINT = /^[A-Za-z0-9]{1,100}$/
export const HOUR = 60 * 60 * 1000
export const CRUD = ['token:create', 'token:read', 'token:update', 'token:delete']
export const ROUTING = '021000021'

export type Body = Record<string, unknown>
export type App = { id: string; key: string }

/** A rule on `container` granting `permissions` under `transform`. */
export const rule = (priority: number, container: string, transform: string, permissions: string[] = CRUD) => ({ priority, container, transform, permissions })

export const masked = (number: string) => 'X'.repeat(number.length - 4) + number.slice(-4)

export let service: TestService
/** Plain token:* permissions: the implicit transform masks. */
export let masker: App
/** A rule on `/` that reveals. */
export let revealer: App
/** A rule on `/` that redacts. */
export let redactor: App
/** token:create only. */
export let creator: App
/** token:read (reveal) and token:create (mask) on `/pci/` only. */
export let pciOnly: App

/** Starts the file's service and its applications before its tests, and stops it after them. */
export function useTokensService(): void {
  beforeAll(async () => {
    service = await startTestService()
    masker = await service.createApplication({ name: 'Masker', type: 'private', permissions: CRUD })
    revealer = await service.createApplication({ name: 'Revealer', type: 'private', rules: [rule(1, '/', 'reveal')] })
    redactor = await service.createApplication({ name: 'Redactor', type: 'private', rules: [rule(1, '/', 'redact')] })
    creator = await service.createApplication({ name: 'Creator', type: 'private', permissions: ['token:create'] })
    pciOnly = await service.createApplication({
      name: 'PCI',
      type: 'private',
      rules: [rule(1, '/pci/', 'reveal', ['token:read']), rule(2, '/pci/', 'mask', ['token:create'])]
    })
  })
  afterAll(() => service.stop())
}

export const now = () => new Date(service.clock.now()).toISOString()
export const path = (id: string) => `/tokens/${encodeURIComponent(id)}`

export function post(body: unknown, key = revealer.key) {
  return service.request('POST', '/tokens', { key, body })
}

/** Creates a token (201 expected) and returns it. */
export async function create(body: Body, key = revealer.key): Promise<Body & { id: string }> {
  const response = await post(body, key)
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body
}

export function get(id: string, key = revealer.key) {
  return service.request('GET', path(id), { key })
}

export function patch(id: string, body: unknown, key = revealer.key) {
  return service.request('PATCH', path(id), { key, body, contentType: MERGE_PATCH })
}

export function list(query: string, key = revealer.key) {
  return service.request('GET', `/tokens?${query}`, { key })
}

export async function logsOf(entityId: string) {
  const response = await service.request('GET', `/logs?entity_id=${encodeURIComponent(entityId)}&size=100`)
  expect(response.status).toBe(200)
  return response.body.data as Body[]
}

export function card(extra: Body = {}) {
  return { number: cardNumber(), expiration_month: 12, expiration_year: 2030, ...extra }
}
