/**
 * Validation of what an application or session is granted: plain permissions
 * and access rules (DESIGN §6). Shared by applications (create, update) and
 * sessions (authorize).
 */
import { z } from 'zod'
import { PERMISSIONS_BY_APPLICATION_TYPE, TRANSFORMS, isPermission, type ApplicationType, type Permission } from '../../shared/permissions'
import type { AccessRule } from '../../shared/types'
import { ValidationError } from './errors'

const CONTAINER_PATTERN = /^\/([A-Za-z0-9_-]+\/)*$/

/** A container path such as `/pci/high/`. */
export const containerSchema = z
  .string()
  .max(400)
  .regex(CONTAINER_PATTERN, 'must be a path like /pci/high/ (letters, digits, _ and -, each segment ending in /)')

function permissionSchema(allowed: readonly Permission[], grantee: string) {
  return z.string().refine((value) => isPermission(value) && allowed.includes(value), {
    message: `is not a permission a ${grantee} may hold (allowed: ${allowed.join(', ')})`
  })
}

const conditionSchema = z.strictObject({
  attribute: z.enum(['id', 'container']),
  operator: z.enum(['starts_with', 'equals']),
  value: z.string().min(1).max(400)
})

function ruleSchema(allowed: readonly Permission[], grantee: string, allowConditions: boolean) {
  return z
    .strictObject({
      description: z.string().max(500).optional(),
      priority: z.number().int().min(1, 'must be 1 or more'),
      container: containerSchema.optional(),
      conditions: z.array(conditionSchema).min(1).max(20).optional(),
      transform: z.enum(TRANSFORMS),
      permissions: z.array(permissionSchema(allowed, grantee)).min(1, 'must grant at least one permission').max(50)
    })
    .superRefine((rule, ctx) => {
      if (rule.container !== undefined && rule.conditions !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['conditions'], message: 'container and conditions are mutually exclusive' })
      } else if (rule.conditions !== undefined && !allowConditions) {
        ctx.addIssue({ code: 'custom', path: ['conditions'], message: 'conditions are only allowed in session rules; use container' })
      } else if (rule.container === undefined && rule.conditions === undefined) {
        ctx.addIssue({ code: 'custom', path: ['container'], message: allowConditions ? 'a rule needs a container or conditions' : 'is required' })
      }
    })
}

/**
 * The `permissions` and `rules` fields for a grantee of `applicationType`.
 * Sessions take the token permissions of private applications and may use conditions.
 */
export function grantFields(applicationType: ApplicationType, options: { session?: boolean } = {}) {
  const allowed = options.session ? PERMISSIONS_BY_APPLICATION_TYPE.private : PERMISSIONS_BY_APPLICATION_TYPE[applicationType]
  const grantee = options.session ? 'session' : `${applicationType} application`
  return {
    permissions: z.array(permissionSchema(allowed, grantee)).max(50).optional(),
    rules: z.array(ruleSchema(allowed, grantee, options.session === true)).max(100).optional()
  }
}

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

export function normaliseRules(rules: readonly z.infer<ReturnType<typeof ruleSchema>>[] | undefined): AccessRule[] {
  return (rules ?? []).map((rule) => ({ ...rule, permissions: normalisePermissions(rule.permissions) }) as AccessRule)
}
