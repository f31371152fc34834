/**
 * The caller's tenant (`/tenants/self`): reading it and renaming it, in the
 * shape Basis Theory's SDKs read. Both are audited.
 */
import type { UpdateTenantInput } from '../../shared/contracts'
import type { Tenant } from '../../shared/types'
import { findTenant, renameTenant, type TenantRow } from '../storage/repositories/tenants.repository'
import { requirePermission } from '../domain/access'
import type { Actor } from '../domain/actor'
import { toIsoString } from '../domain/dates'
import { NotFoundError } from '../domain/errors'
import type { ServiceContext } from './service-context'
import { audit } from './audit'

function toTenant(row: TenantRow): Tenant {
  const tenant: Tenant = { id: row.id, name: row.name, settings: {}, created_at: toIsoString(Number(row.created_at)) }
  if (row.owner_user_id) tenant.owner_id = row.owner_user_id
  if (row.modified_at != null) tenant.modified_at = toIsoString(Number(row.modified_at))
  return tenant
}

export class TenantsService {
  constructor(private readonly context: ServiceContext) {}

  /** `GET /tenants/self`. */
  async get(actor: Actor): Promise<Tenant> {
    requirePermission(actor, 'tenant:read')
    const row = await findTenant(this.context.reader, actor.tenantId)
    if (!row) throw new NotFoundError('Tenant')
    await audit(this.context.writes, this.context.clock.now(), [{ actor, entityType: 'tenant', entityId: row.id, operation: 'read', message: 'Tenant retrieved' }])
    return toTenant(row)
  }

  /** `PUT /tenants/self`: renames the tenant. */
  async update(actor: Actor, input: UpdateTenantInput): Promise<Tenant> {
    requirePermission(actor, 'tenant:update')
    const now = this.context.clock.now()
    return this.context.writes.run(async (trx) => {
      const before = await findTenant(trx, actor.tenantId)
      if (!before) throw new NotFoundError('Tenant')
      await renameTenant(trx, actor.tenantId, input.name, now)
      audit(trx, now, [{ actor, entityType: 'tenant', entityId: before.id, operation: 'update', message: 'Tenant renamed' }])
      return toTenant({ ...before, name: input.name, modified_at: now })
    })
  }
}
