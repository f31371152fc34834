/**
 * Every write route that takes an API key has its idempotency rule: what a
 * replay of it may hand out, and the permissions the caller must still hold
 * for it (those the route itself requires). A route added without one would replay only that it succeeded (a
 * 409), with no permission checked again.
 */
import { describe, expect, it } from 'vitest'
import { READS, REPLAY_RULES } from '../../src/main/server/middleware/idempotency'
import { openApiDocument } from '../../src/main/server/openapi'

type Operation = { security?: unknown[]; description?: string }

const document = openApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> }

/** `METHOD /pattern` as the routers name it, and the permissions the document says the operation needs. */
const writes = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method, operation]) => method !== 'get' && operation.security?.length !== 0)
    .map(([method, operation]) => ({
      route: `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
      permissions: [.../Permission: (.*)\./.exec(operation.description ?? '')?.[1].matchAll(/`([^`]+)`/g) ?? []].map((match) => match[1])
    }))
)

describe('idempotency rules', () => {
  it('name every keyed write route of the contract, with the permissions the route itself requires', () => {
    expect(writes.length).toBeGreaterThan(20)
    for (const { route, permissions } of writes) {
      if (READS.has(route)) continue
      const rule = REPLAY_RULES[route]
      expect({ route, rule }).toEqual({ route, rule: expect.objectContaining({ keep: expect.any(String) }) })
      expect({ route, permissions: [...(rule.permissions ?? [])].sort() }).toEqual({ route, permissions: [...permissions].sort() })
    }
  })

  it('name no route the contract does not have', () => {
    const routes = new Set(writes.map((write) => write.route))
    expect([...Object.keys(REPLAY_RULES), ...READS].filter((route) => !routes.has(route))).toEqual([])
  })
})
