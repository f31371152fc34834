/**
 * The access rules are defined once and compiled twice: to the in-memory check
 * that GET /tokens/{id} uses, and to the predicate the tokens repository turns
 * into SQL for lists. Random tokens (of each type, in its default containers or
 * their own) and rules, through both, against a real SQLite database: a list must
 * show exactly the tokens a single read allows, whether it walks the tokens or
 * reads the candidates the rules' containers give.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import type { AccessRule, Condition } from '../../src/shared/types'
import { transformFor, visibleTokens } from '../../src/main/domain/access'
import type { Actor } from '../../src/main/domain/actor'
import type { StoredToken } from '../../src/main/domain/token'
import { appendTokens, countTokens, findTokenPage, listTokens, seekTokens, type TokenPosition } from '../../src/main/storage/repositories/tokens.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { WriteQueue } from '../../src/main/storage/write-queue'
import { useTemporaryDatabase } from '../helpers/database'

/** Few characters, so prefixes and equalities happen; `_` and `%` are LIKE wildcards, `é` and `😀` are not ASCII. */
const character = fc.constantFrom('a', 'b', 'A', '_', '-', '%', '/', 'é', '😀')
const text = (maxLength: number) => fc.string({ unit: character, minLength: 1, maxLength })
const segment = fc.string({ unit: fc.constantFrom('a', 'b', 'A', '_', '-'), minLength: 1, maxLength: 2 })
/** A container path as tokens and rules hold them: `/`, `/a/`, `/a/_b/`. */
const container = fc.array(segment, { maxLength: 3 }).map((segments) => `/${segments.map((name) => `${name}/`).join('')}`)

/** Each type's default containers, which most tokens keep (they are found through the type, not the containers' index). */
const DEFAULTS: Record<string, string[]> = { token: ['/general/high/'], card: ['/pci/high/'], bank: ['/bank/high/'] }
const tokenShape = fc
  .record({ id: text(5), type: fc.constantFrom('token', 'card', 'bank'), own: fc.option(fc.uniqueArray(container, { minLength: 1, maxLength: 3 }), { nil: undefined }) })
  .map(({ id, type, own }) => ({ id, type, containers: own ?? DEFAULTS[type] }))
const tokens = fc.uniqueArray(tokenShape, { maxLength: 12, selector: (token) => token.id })

/** Code points, so a cut never splits a surrogate pair. */
const chars = (value: string) => [...value]

/** A prefix of one of `values` (often all of it), or one that just misses it (another case, a LIKE wildcard in place of a character). */
function nearPrefix(values: string[]): fc.Arbitrary<string> {
  if (values.length === 0) return text(4)
  const whole = fc.constantFrom(...values).map(chars)
  const cut = fc.constantFrom(...values).chain((value) => fc.integer({ min: 1, max: chars(value).length }).map((n) => chars(value).slice(0, n)))
  const prefix = fc.oneof(whole, cut)
  return fc.oneof(
    prefix.map((cs) => cs.join('')),
    prefix.map((cs) => cs.join('').toUpperCase()),
    prefix.map((cs) => cs.join('').toLowerCase()),
    prefix.map((cs) => [...cs.slice(0, -1), '_'].join('')),
    prefix.map((cs) => ['%', ...cs.slice(1)].join('')),
    prefix.map((cs) => `${cs.join('')}%`)
  )
}

const permissions = fc.subarray(['token:read' as const, 'token:create' as const], { minLength: 1 })
const transform = fc.constantFrom('redact' as const, 'mask' as const, 'reveal' as const)

/** Rules over `shapes`: their values are often prefixes (or near misses) of the tokens' ids and containers. */
function rulesFor(shapes: { id: string; containers: string[] }[]): fc.Arbitrary<AccessRule[]> {
  const ids = nearPrefix(shapes.map((shape) => shape.id))
  const containers = [...shapes.flatMap((shape) => shape.containers), '/pci/', '/general/', '/bank/high/']
  const condition: fc.Arbitrary<Condition> = fc.oneof(
    fc.record({ attribute: fc.constant('id' as const), operator: fc.constantFrom('starts_with' as const, 'equals' as const), value: fc.oneof(ids, text(4)) }),
    fc.record({
      attribute: fc.constant('container' as const),
      operator: fc.constantFrom('starts_with' as const, 'equals' as const),
      value: fc.oneof(nearPrefix(containers), container)
    })
  )
  const rule: fc.Arbitrary<AccessRule> = fc.oneof(
    fc.record({ priority: fc.integer({ min: 1, max: 5 }), container: containers.length ? fc.oneof(fc.constantFrom(...containers), container) : container, transform, permissions }),
    // Conditions (sessions only); an empty list matches no token.
    fc.record({ priority: fc.integer({ min: 1, max: 5 }), conditions: fc.array(condition, { maxLength: 3 }), transform, permissions })
  )
  return fc.array(rule, { maxLength: 4 })
}

const scenario = tokens.chain((shapes) => fc.tuple(fc.constant(shapes), rulesFor(shapes), fc.boolean()))

function storedToken(tenantId: string, { id, type, containers }: { id: string; type: string; containers: string[] }): StoredToken {
  return {
    tenant_id: tenantId,
    id,
    type,
    key_version: 1,
    sealed_data: Buffer.alloc(40),
    fingerprint: randomBytes(32).toString('hex'),
    fingerprint_expression: '{{ data | stringify }}',
    mask: null,
    containers,
    metadata: {},
    search_indexes: null,
    expires_at: null,
    cvc_expires_at: null,
    created_by: null,
    created_at: 1,
    modified_by: null,
    modified_at: null
  }
}

describe('token visibility: the in-memory access check and the SQL list filter', () => {
  const temporary = useTemporaryDatabase('visibility')
  let writes: WriteQueue
  beforeAll(() => {
    writes = new WriteQueue(temporary.db.writer)
  })

  it('list exactly the tokens a rule-bound caller may read one by one', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ([shapes, rules, plainRead]) => {
        const tenantId = randomUUID()
        await insertTenant(temporary.db.writer, { id: tenantId, name: 'visibility', owner_user_id: null, created_at: 0 })
        await writes.append((rows) => appendTokens(rows, shapes.map((shape) => ({ token: storedToken(tenantId, shape), searchIndexes: [] })), () => new Error('duplicate id')))
        const actor: Actor = { type: 'session', id: randomUUID(), tenantId, permissions: plainRead ? ['token:read'] : [], rules }

        const readable = shapes.filter((shape) => transformFor(actor, 'token:read', shape) !== undefined).map((shape) => shape.id)
        const filter = { tenantId, now: 2, ids: [], types: [], metadata: {}, visibleBy: visibleTokens(actor, 'token:read') }
        const listed = (await listTokens(temporary.db.reader, filter, 100, 0)).map((token) => token.id)
        // A page of one: found by walking the tokens in list order or through the rules' candidates, whichever reads fewer.
        const { rows: firstPage, total } = await findTokenPage(temporary.db.reader, filter, 1, 0)
        expect(firstPage.map((token) => token.id)).toEqual(listed.slice(0, 1))
        expect(total).toBe(readable.length)
        // The v2 list (its own order: time, then id), page by page: through the candidates when they are few, or windows of the tokens.
        const sought: string[] = []
        for (let after: TokenPosition | undefined, pages = 0; pages < 20; pages++) {
          const page = await seekTokens(temporary.db.reader, { tenantId, now: 2, containers: [], metadata: {}, visibleBy: filter.visibleBy }, 2, after)
          sought.push(...page.rows.map((token) => token.id))
          if (!(after = page.next)) break
        }
        expect(listed.sort()).toEqual(readable.sort())
        expect(sought.sort()).toEqual(listed)
        expect(await countTokens(temporary.db.reader, filter)).toBe(readable.length)
      }),
      { numRuns: 600 }
    )
  })
})
