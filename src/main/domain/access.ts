/**
 * Access evaluation. Rules are tried in ascending priority; only rules
 * granting the needed permission take part; the first that matches the token
 * decides the transform. Plain permissions act as a last rule on `/` with an
 * implicit transform.
 *
 * What a rule matches is defined once, as conditions (`ruleConditions`), and
 * compiled two ways: to the in-memory check (`ruleMatches`), and to a
 * storage-neutral predicate (`visibleTokens`) that storage turns into SQL for
 * lists. A property test holds the two equal.
 */
import type { AccessRule, Condition, Permission, Transform } from '../../shared/types'
import type { Actor } from './actor'
import { ForbiddenError } from './errors'

/** The parts of a token that rules look at. */
export interface AccessTarget {
  id: string
  containers: readonly string[]
}

/** Transform implied by a plain permission: reading for use reveals, the rest masks. */
function implicitTransform(permission: Permission): Transform {
  return permission === 'token:use' ? 'reveal' : 'mask'
}

function conditionHolds(condition: Condition, target: AccessTarget): boolean {
  const values = condition.attribute === 'id' ? [target.id] : target.containers
  return values.some((value) =>
    condition.operator === 'equals' ? value === condition.value : value.startsWith(condition.value)
  )
}

/**
 * The tokens a rule matches, as conditions that must all hold: one of the token's
 * containers starts with the rule's container, or every condition holds (sessions
 * only). Undefined when the rule matches no token.
 */
function ruleConditions(rule: AccessRule): readonly Condition[] | undefined {
  if (rule.container !== undefined) return [{ attribute: 'container', operator: 'starts_with', value: rule.container }]
  return rule.conditions?.length ? rule.conditions : undefined
}

/** Whether a token meets every condition of a clause. */
function clauseHolds(clause: readonly Condition[], target: AccessTarget): boolean {
  return clause.every((condition) => conditionHolds(condition, target))
}

/** Whether one rule covers a token. */
export function ruleMatches(rule: AccessRule, target: AccessTarget): boolean {
  const conditions = ruleConditions(rule)
  return conditions !== undefined && clauseHolds(conditions, target)
}

function sortedRules(actor: Actor): AccessRule[] {
  return [...actor.rules].sort((a, b) => a.priority - b.priority)
}

/**
 * The transform under which `actor` may exercise `permission` on `target`, or
 * undefined when nothing grants it.
 */
export function transformFor(actor: Actor, permission: Permission, target: AccessTarget): Transform | undefined {
  // Members see masked data everywhere; plaintext only through the explicit, logged reveal.
  if (actor.isMember) return 'mask'
  for (const rule of sortedRules(actor)) {
    if (rule.permissions.includes(permission) && ruleMatches(rule, target)) return rule.transform === 'reveal' && isPublicApplication(actor) ? 'mask' : rule.transform
  }
  return actor.permissions.includes(permission) ? implicitTransform(permission) : undefined
}

/**
 * A public application's key ships to browsers and phones: it never reveals, whatever a stored
 * rule says. (A session, which a private application authorizes with the grant it chooses, is not one.)
 */
function isPublicApplication(actor: Actor): boolean {
  return actor.type === 'application' && actor.applicationType === 'public'
}

/** Like `transformFor`, but a missing grant is a 403. */
export function requireTokenAccess(actor: Actor, permission: Permission, target: AccessTarget): Transform {
  const transform = transformFor(actor, permission, target)
  if (!transform) throw new ForbiddenError(`The caller lacks ${permission} on this token.`)
  return transform
}

const TRANSFORM_STRENGTH: Record<Transform, number> = { redact: 0, mask: 1, reveal: 2 }

/** Whether transform `a` shows no more of a token than `b`. */
export function transformWithin(a: Transform, b: Transform): boolean {
  return TRANSFORM_STRENGTH[a] <= TRANSFORM_STRENGTH[b]
}

/** Whether every token meeting `specific` meets `general` too (false when that cannot be told from the conditions). */
function conditionImplies(specific: Condition, general: Condition): boolean {
  if (specific.attribute !== general.attribute) return false
  if (general.operator === 'equals') return specific.operator === 'equals' && specific.value === general.value
  return specific.value.startsWith(general.value)
}

/** Every token has at least one container, and every container starts with `/`. */
function holdsForEveryToken(condition: Condition): boolean {
  return condition.attribute === 'container' && condition.operator === 'starts_with' && '/'.startsWith(condition.value)
}

function scopeCovers(general: readonly Condition[], specific: readonly Condition[]): boolean {
  return general.every((condition) => holdsForEveryToken(condition) || specific.some((given) => conditionImplies(given, condition)))
}

/**
 * Whether `actor` holds `permission` under at least `transform` on every token
 * `scope` can match: some grant of the actor covers the scope, and no grant
 * evaluated before it is weaker. That earlier grant may not look like it
 * overlaps the scope, but a token can sit in several containers, so it could
 * decide one of the scope's tokens. Errs towards "no", never towards "yes".
 */
function holdsWithin(actor: Actor, permission: Permission, transform: Transform, scope: readonly Condition[]): boolean {
  if (actor.isMember) return transformWithin(transform, 'mask')
  const grants = sortedRules(actor)
    .filter((rule) => rule.permissions.includes(permission))
    .flatMap((rule) => {
      const ruleScope = ruleConditions(rule)
      return ruleScope ? [{ scope: ruleScope, transform: rule.transform }] : []
    })
  if (actor.permissions.includes(permission)) grants.push({ scope: [], transform: implicitTransform(permission) })
  for (const grant of grants) {
    if (!transformWithin(transform, grant.transform)) return false
    if (scopeCovers(grant.scope, scope)) return true
  }
  return false
}

/**
 * What a grant (permissions and rules, as handed to a session) gives beyond
 * what `actor` holds: each permission the actor lacks outright, or
 * "<permission> with <transform>" where some token would be shown more than
 * the actor may show it. Empty when the grant stays within the actor's own.
 */
export function grantBeyond(actor: Actor, grant: { permissions: readonly Permission[]; rules: readonly AccessRule[] }): string[] {
  const granted = [
    ...grant.permissions.map((permission) => ({ permission, transform: implicitTransform(permission), scope: [] as readonly Condition[] })),
    ...grant.rules.flatMap((rule) => {
      const scope = ruleConditions(rule)
      return scope ? rule.permissions.map((permission) => ({ permission, transform: rule.transform, scope })) : []
    })
  ]
  const beyond = new Set<string>()
  for (const { permission, transform, scope } of granted) {
    if (!holdsPermission(actor, permission)) beyond.add(permission)
    else if (!holdsWithin(actor, permission, transform, scope)) beyond.add(`${permission} with ${transform}`)
  }
  return [...beyond]
}

/** Whether the actor holds a permission anywhere (plainly or through a rule). */
export function holdsPermission(actor: Actor, permission: Permission): boolean {
  return (
    actor.isMember === true ||
    actor.permissions.includes(permission) ||
    actor.rules.some((rule) => rule.permissions.includes(permission))
  )
}

/** For non-token operations: the plain permission is required (rules scope only tokens). */
export function requirePermission(actor: Actor, ...permissions: Permission[]): void {
  for (const permission of permissions) {
    if (!actor.isMember && !actor.permissions.includes(permission)) {
      throw new ForbiddenError(`The caller lacks the ${permission} permission.`)
    }
  }
}

/**
 * A set of tokens, storage-neutral: those meeting every condition of at least
 * one clause (no clause: no token). Storage turns it into SQL.
 */
export type TokenPredicate = readonly (readonly Condition[])[]

/**
 * The tokens `actor` may exercise `permission` on (under any transform): undefined
 * for every token, else the predicate of the rules granting it. The same answer as
 * `transformFor(…) !== undefined`, for a whole list at once.
 */
export function visibleTokens(actor: Actor, permission: Permission): TokenPredicate | undefined {
  if (actor.isMember || actor.permissions.includes(permission)) return undefined
  return actor.rules.flatMap((rule) => {
    const conditions = rule.permissions.includes(permission) ? ruleConditions(rule) : undefined
    return conditions ? [conditions] : []
  })
}
