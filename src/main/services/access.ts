/**
 * Access evaluation (DESIGN §6). Rules are tried in ascending priority; only
 * rules granting the needed permission take part; the first that matches the
 * token decides the transform. Plain permissions act as a last rule on `/`
 * with an implicit transform.
 */
import type { AccessRule, Condition, Permission, Transform } from '../../shared/types'
import type { Actor } from './context'
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

/** Whether one rule covers a token: container prefix match, or all conditions hold. */
export function ruleMatches(rule: AccessRule, target: AccessTarget): boolean {
  if (rule.container !== undefined) {
    const container = rule.container
    return target.containers.some((c) => c.startsWith(container))
  }
  if (rule.conditions?.length) return rule.conditions.every((condition) => conditionHolds(condition, target))
  return false
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
    if (rule.permissions.includes(permission) && ruleMatches(rule, target)) return rule.transform
  }
  return actor.permissions.includes(permission) ? implicitTransform(permission) : undefined
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

/** The most revealing transform under which the actor holds `permission` anywhere, if at all. */
export function strongestTransform(actor: Actor, permission: Permission): Transform | undefined {
  const held: Transform[] = actor.rules.filter((rule) => rule.permissions.includes(permission)).map((rule) => rule.transform)
  if (actor.isMember || actor.permissions.includes(permission)) held.push(implicitTransform(permission))
  return held.reduce<Transform | undefined>((best, t) => (best && transformWithin(t, best) ? best : t), undefined)
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
 * Which tokens a list may show, in a form a repository can turn into SQL:
 * everything, or tokens matching any of the listed rules.
 */
export type VisibilityScope = { all: true } | { all: false; rules: AccessRule[] }

export function visibilityScope(actor: Actor, permission: Permission): VisibilityScope {
  if (actor.isMember || actor.permissions.includes(permission)) return { all: true }
  return { all: false, rules: sortedRules(actor).filter((rule) => rule.permissions.includes(permission)) }
}
