/**
 * Checks on what an application or session is granted beyond the shape of
 * its permissions and rules (src/shared/contracts/access.ts). Shared by
 * applications (create, update) and sessions (authorize).
 */
import type { AccessRuleInput } from '../../shared/contracts'
import type { Permission } from '../../shared/permissions'
import type { AccessRule } from '../../shared/types'
import { ValidationError } from './errors'

/** At least one of permissions and rules must be non-empty (spec). */
export function requireSomeGrant(grant: { permissions?: unknown[]; rules?: unknown[] }): void {
  if (!grant.permissions?.length && !grant.rules?.length) {
    throw new ValidationError({
      permissions: ['at least one of permissions and rules must be non-empty'],
      rules: ['at least one of permissions and rules must be non-empty']
    })
  }
}

/** Drops duplicate permissions, keeping the first occurrence. */
export function normalisePermissions(permissions: readonly string[] | undefined): Permission[] {
  return [...new Set(permissions ?? [])] as Permission[]
}

export function normaliseRules(rules: readonly AccessRuleInput[] | undefined): AccessRule[] {
  return (rules ?? []).map((rule) => ({ ...rule, permissions: normalisePermissions(rule.permissions) }) as AccessRule)
}
