/** The caller's tenant (`/tenants/self`), in Basis Theory's shape. */
import { z } from 'zod'
import { timestamp } from './common'
import { tenantNameSchema } from './fields'

/**
 * `PUT /tenants/self`: renames the tenant. Tessera has no tenant settings, so
 * `settings` is accepted only empty (a setting it would ignore is refused, not dropped).
 */
export const updateTenantBody = z.strictObject({
  name: tenantNameSchema,
  settings: z
    .record(z.string(), z.unknown())
    .optional()
    .superRefine((settings, ctx) => {
      for (const key of Object.keys(settings ?? {})) ctx.addIssue({ code: 'custom', path: [key], message: 'is not a setting Tessera has (it has none)' })
    })
    .meta({ description: 'Tenant settings: Tessera has none, so only `{}` is accepted' })
})

export type UpdateTenantInput = z.infer<typeof updateTenantBody>

export const tenant = z
  .strictObject({
    id: z.uuid(),
    name: z.string(),
    owner_id: z.uuid().optional().meta({ description: 'The user id of the OWNER member' }),
    settings: z.record(z.string(), z.string()).meta({ description: 'Always empty: Tessera has no tenant settings' }),
    created_at: timestamp,
    modified_at: timestamp.optional()
  })
  .meta({ id: 'Tenant' })
