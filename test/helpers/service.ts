/**
 * Starts the real service (same start path as `tessera serve`) on an ephemeral
 * port over a fresh temporary vault, and gives tests a small fetch wrapper that
 * fails the test when a response does not match the OpenAPI document.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateMasterKey } from '../../src/main/crypto/keys'
import { readySodium } from '../../src/main/crypto/sodium'
import type { MasterKey } from '../../src/main/crypto/types'
import { silentLogger, type Logger } from '../../src/main/infra/logger'
import { startServiceHost, type ServiceHost } from '../../src/main/bootstrap/service-host'
import type { MailConfig } from '../../src/main/infra/mail-transport'
import { initVault } from '../../src/main/bootstrap/vault'
import { TestClock } from './clock'
import type { WebhookDeliveryConfig } from '../../src/main/app/webhook-delivery'
import { undocumentedResponse } from './openapi'
import { teamDatabases } from './database'
import { createTestDatabase, testEngine } from './postgres'

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
}

export interface RequestOptions {
  key?: string | null
  body?: unknown
  /** Sent as is, for malformed-body tests. */
  rawBody?: string
  contentType?: string
  headers?: Record<string, string>
}

export interface TestService {
  url: string
  dataDir: string
  masterKey: MasterKey
  clock: TestClock
  host: ServiceHost
  tenantId: string
  ownerUserId: string
  /** Key of the management application created by init (every management permission). */
  adminKey: string
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>
  /** Creates an application through the API and returns its key and id. */
  createApplication(body: Record<string, unknown>): Promise<{ id: string; key: string }>
  /** Stops the service gracefully and keeps its data dir (to inspect or alter the database file). */
  pause(): Promise<void>
  /** Starts the service again over the same vault. */
  resume(): Promise<void>
  stop(): Promise<void>
}

export async function startTestService(
  options: { clock?: TestClock; bodyLimitBytes?: number; mail?: MailConfig; logger?: Logger; sessionMaxTtlMs?: number; cvcRetentionMs?: number; auditRetentionDays?: number; corsOrigins?: string[]; webhooks?: WebhookDeliveryConfig } = {}
): Promise<TestService> {
  await readySodium()
  const dataDir = await mkdtemp(join(tmpdir(), 'tessera-test-'))
  const masterKey = generateMasterKey()
  const clock = options.clock ?? new TestClock()
  const database = testEngine === 'postgres' ? await createTestDatabase() : undefined
  const databaseUrl = database?.url
  if (databaseUrl) teamDatabases.set(dataDir, databaseUrl)
  const init = await initVault({ dataDir, databaseUrl, masterKey, tenantName: 'Test tenant', ownerEmail: 'owner@example.com', clock })
  const start = () =>
    startServiceHost({
      dataDir,
      databaseUrl,
      masterKey,
      host: '127.0.0.1',
      port: 0,
      logger: options.logger ?? silentLogger(),
      clock,
      bodyLimitBytes: options.bodyLimitBytes,
      mail: options.mail,
      sessionMaxTtlMs: options.sessionMaxTtlMs,
      cvcRetentionMs: options.cvcRetentionMs,
      auditRetentionDays: options.auditRetentionDays,
      corsOrigins: options.corsOrigins,
      webhooks: options.webhooks,
      // No background timer: tests move the clock and call `services.jobs.runDueJobs()` themselves.
      jobTickMs: 0
    })
  let host = await start()
  const adminKey = init.application.key

  async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers }
    const key = opts.key === undefined ? adminKey : opts.key
    if (key !== null) headers['svc-api-key'] = key
    let body: string | undefined = opts.rawBody
    if (opts.body !== undefined) body = JSON.stringify(opts.body)
    if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json'
    const response = await fetch(host.url + path, { method, headers, body })
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      // leave as text
    }
    const mismatch = undocumentedResponse({ method, url: path, status: response.status, contentType: response.headers.get('content-type'), text, body: parsed })
    if (mismatch) throw new Error(`The response does not match the OpenAPI document: ${mismatch}`)
    return { status: response.status, headers: response.headers, body: parsed as T }
  }

  return {
    get url() {
      return host.url
    },
    dataDir,
    masterKey,
    clock,
    get host() {
      return host
    },
    tenantId: init.tenant_id,
    ownerUserId: init.owner_user_id,
    adminKey,
    request,
    async createApplication(body) {
      const response = await request<{ id: string; key: string }>('POST', '/applications', { body })
      if (response.status !== 201) throw new Error(`createApplication failed: ${response.status} ${JSON.stringify(response.body)}`)
      return { id: response.body.id, key: response.body.key }
    },
    pause: () => host.stop(),
    async resume() {
      host = await start()
    },
    async stop() {
      await host.stop()
      await rm(dataDir, { recursive: true, force: true })
      await database?.drop()
    }
  }
}
