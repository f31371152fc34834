import type Router from '@koa/router'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/main/infra/logger'
import { createServer } from '../../src/main/server/app'
import { openApiDocument } from '../../src/main/server/openapi'
import { renderApiMarkdown } from '../../src/main/server/openapi-markdown'
import type { Services } from '../../src/main/bootstrap/services'
import { undocumentedResponse } from '../helpers/openapi'

type Operation = { operationId: string; security?: unknown[]; requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> }

const document = openApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> }

const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation }))
)

const operation = (route: string) => operations.find((entry) => entry.route === route)!.operation

/** `METHOD /path/{param}` of every layer of every router the app mounts, found the way Koa dispatches: through its middleware. */
function mountedRoutes(): string[] {
  // The routes only capture the services; nothing is called while listing them.
  const app = createServer({} as Services, { logger: silentLogger() })
  const routers = app.middleware.flatMap((middleware) => {
    const mounted = middleware as { router?: Router; routers?: Router[] }
    return mounted.router ? [mounted.router] : (mounted.routers ?? [])
  })
  const routes = routers.flatMap((router) =>
    router.stack.flatMap((layer) => layer.methods.filter((method) => method !== 'HEAD').map((method) => `${method} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`))
  )
  return [...new Set(routes)].sort()
}

describe('the OpenAPI document', () => {
  it('lists every route the Koa app mounts, and nothing else', () => {
    const documented = operations.map((entry) => entry.route).sort()
    expect(mountedRoutes()).toEqual(documented)
    expect(documented).toContain('GET /openapi.json')
  })

  it('names each operation once', () => {
    const ids = operations.map((entry) => entry.operation.operationId)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('asks for SVC-API-KEY everywhere but the health check and ping, this document, the webhook signing key and the invitation acceptance routes', () => {
    const open = operations.filter((entry) => entry.operation.security?.length === 0).map((entry) => entry.route)
    expect(open.sort()).toEqual(['GET /health', 'GET /invitations/accept', 'GET /openapi.json', 'GET /ping', 'GET /webhooks/signing-key', 'POST /invitations/accept'])
    for (const { route, operation: op } of operations) {
      if (!open.includes(route)) expect(Object.keys(op.responses), route).toContain('401')
    }
  })

  it('documents token updates as merge patches', () => {
    expect(Object.keys(operation('PATCH /tokens/{id}').requestBody!.content)).toEqual(['application/merge-patch+json'])
  })

  it('is what docs/api.md shows (run `npm run docs:api` after changing the interface)', () => {
    const committed = readFileSync(join(__dirname, '../../docs/api.md'), 'utf8')
    expect(committed).toBe(renderApiMarkdown(openApiDocument()))
  })
})

describe('the response check of the API tests', () => {
  const json = 'application/json; charset=utf-8'
  const problem = { type: 'about:blank', title: 'Not Found', status: 404, detail: 'Token not found.', code: 'not_found' }

  it('accepts a response the document describes', () => {
    expect(undocumentedResponse({ method: 'GET', url: '/health', status: 200, contentType: json, text: '{"status":"ok"}', body: { status: 'ok' } })).toBeUndefined()
    expect(undocumentedResponse({ method: 'GET', url: '/tokens/a%2Fb?x=1', status: 404, contentType: 'application/problem+json', text: '…', body: problem })).toBeUndefined()
  })

  it('names the operation and the status that is not documented', () => {
    expect(undocumentedResponse({ method: 'GET', url: '/health', status: 201, contentType: json, text: '{}', body: {} })).toMatch(/^health \(GET \/health\): status 201 is not documented/)
  })

  it('names the field that breaks the response schema', () => {
    const error = undocumentedResponse({ method: 'GET', url: '/tokens/abc', status: 200, contentType: json, text: '{}', body: { id: 'abc', tenant_id: 'nope', secret: 1 } })
    expect(error).toMatch(/^getToken \(GET \/tokens\/\{id\}\) → 200 application\/json: /)
    expect(error).toContain("body must have required property 'fingerprint'")
    expect(error).toContain('body/tenant_id must match format "uuid"')
    expect(error).toContain('body must NOT have additional properties')
  })

  it('refuses an undocumented content type and a body where none is documented', () => {
    expect(undocumentedResponse({ method: 'GET', url: '/applications/key', status: 404, contentType: json, text: '{}', body: problem })).toContain('content type')
    expect(undocumentedResponse({ method: 'DELETE', url: '/tokens/a', status: 204, contentType: null, text: 'x', body: 'x' })).toContain('documented without a body')
  })

  it('prefers a literal path to a template: /applications/key is not an application id', () => {
    expect(undocumentedResponse({ method: 'GET', url: '/applications/key', status: 404, contentType: 'application/problem+json', text: '…', body: problem })).toBeUndefined()
    expect(undocumentedResponse({ method: 'GET', url: '/tokens', status: 404, contentType: 'application/problem+json', text: '…', body: problem })).toContain('not documented')
  })

  it('wants a problem document for requests no operation takes', () => {
    expect(undocumentedResponse({ method: 'GET', url: '/nope', status: 404, contentType: 'application/problem+json', text: '…', body: problem })).toBeUndefined()
    expect(undocumentedResponse({ method: 'GET', url: '/nope', status: 404, contentType: 'text/plain', text: 'Not Found', body: 'Not Found' })).toContain('instead of application/problem+json')
    expect(undocumentedResponse({ method: 'DELETE', url: '/health', status: 200, contentType: json, text: '{}', body: {} })).toContain('instead of 401, 404 or 405')
  })
})
