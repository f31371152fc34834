/**
 * What an application or session is granted: permissions and access rules.
 * Shared by applications (create, update) and sessions (authorize).
 */
import { z } from 'zod'
import { MANAGEMENT_PERMISSIONS, PERMISSIONS_BY_APPLICATION_TYPE, TOKEN_PERMISSIONS, TRANSFORMS, isPermission, type ApplicationType, type Permission } from '../permissions'
import { withoutNul } from './fields'

const CONTAINER_PATTERN = /^\/([A-Za-z0-9_-]+\/)*$/

const ALL_PERMISSIONS: readonly Permission[] = [...TOKEN_PERMISSIONS, ...MANAGEMENT_PERMISSIONS]

/** A container path such as `/pci/high/`. */
export const containerPath = z
  .string()
  .max(400)
  .regex(CONTAINER_PATTERN, 'must be a path like /pci/high/ (letters, digits, _ and -, each segment ending in /)')
  .meta({ description: 'A container path such as `/pci/high/`', examples: ['/pci/high/'] })

export const permission = z.enum(ALL_PERMISSIONS as [Permission, ...Permission[]], { error: 'is not a permission' }).meta({ id: 'Permission' })
export const transform = z.enum(TRANSFORMS).meta({ description: '`redact` removes `data`, `mask` shows the masked value, `reveal` the plaintext' })

function permissionName(allowed: readonly Permission[], grantee: string) {
  return z
    .string()
    .refine((value) => isPermission(value) && allowed.includes(value), {
      message: `is not a permission a ${grantee} may hold (allowed: ${allowed.join(', ')})`
    })
    .meta({ enum: [...allowed] })
}

export const condition = z
  .strictObject({
    attribute: z.enum(['id', 'container']),
    operator: z.enum(['starts_with', 'equals']),
    value: withoutNul(z.string().min(1).max(400)).meta({ description: 'Compared with the token’s id or each of its containers' })
  })
  .meta({ id: 'Condition' })

function accessRuleFields<P extends z.ZodType, C extends z.ZodArray<typeof condition>>(permissions: P, conditions: C) {
  return {
    description: withoutNul(z.string().max(500)).optional(),
    priority: z.number().int().min(1, 'must be 1 or more').meta({ description: 'Rules are tried in ascending priority; the first match decides the transform' }),
    container: containerPath.optional().meta({ description: 'Tokens in this container (or below it) match' }),
    conditions: conditions.optional().meta({ description: 'Session rules only: tokens match when every condition holds' }),
    transform,
    permissions: z.array(permissions).min(1, 'must grant at least one permission').max(50)
  }
}

/** A public application's key ships inside browsers and phones: it may put data in, never read plaintext back. */
const PUBLIC_REVEAL = 'a public application may not reveal data (its key ships to browsers and phones): use mask or redact'

function accessRule(permissionItem: z.ZodType<string>, options: { allowConditions: boolean; allowReveal: boolean }) {
  const { allowConditions } = options
  return z.strictObject(accessRuleFields(permissionItem, z.array(condition).min(1).max(20))).superRefine((rule, ctx) => {
    if (rule.transform === 'reveal' && !options.allowReveal) ctx.addIssue({ code: 'custom', path: ['transform'], message: PUBLIC_REVEAL })
    if (rule.container !== undefined && rule.conditions !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['conditions'], message: 'container and conditions are mutually exclusive' })
    } else if (rule.conditions !== undefined && !allowConditions) {
      ctx.addIssue({ code: 'custom', path: ['conditions'], message: 'conditions are only allowed in session rules; use container' })
    } else if (rule.container === undefined && rule.conditions === undefined) {
      ctx.addIssue({ code: 'custom', path: ['container'], message: allowConditions ? 'a rule needs a container or conditions' : 'is required' })
    }
  })
}

/** An access rule as responses show it. */
export const accessRuleView = z.strictObject(accessRuleFields(permission, z.array(condition))).meta({ id: 'AccessRule' })

export type AccessRuleInput = z.infer<ReturnType<typeof accessRule>>

/**
 * The `permissions` and `rules` fields for a grantee of `applicationType`, or
 * of any application type (the whole catalogue) when absent, or with any names
 * (`'unchecked'`). Sessions take the token permissions of private applications
 * and may use conditions. A public application's rules may not `reveal`.
 */
export function grantFields(applicationType?: ApplicationType | 'unchecked', options: { session?: boolean } = {}) {
  const granteeType = options.session ? 'private' : applicationType
  const item: z.ZodType<string> =
    granteeType === 'unchecked'
      ? z.string()
      : granteeType
        ? permissionName(PERMISSIONS_BY_APPLICATION_TYPE[granteeType], options.session ? 'session' : `${granteeType} application`)
        : permission
  return {
    permissions: z.array(item).max(50).optional(),
    rules: z.array(accessRule(item, { allowConditions: options.session === true, allowReveal: granteeType !== 'public' })).max(100).optional()
  }
}
