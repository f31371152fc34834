/**
 * Tenant members (spec "Tenant members"): listing and revoking.
 * Members join through invitations (invitations.service.ts). The OWNER cannot
 * be deleted; a deleted member loses access at once because the desktop user
 * is checked against the member row (`isActiveMember`).
 */
import { z } from 'zod'
import type { ListMembersQuery } from '../../shared/contracts'
import type { Page, TenantMember, User } from '../../shared/types'
import { countMembers, deleteMember, listMembers, type MemberWithUserRow } from '../storage/repositories/members.repository'
import { findMember, findMemberByUser } from '../storage/repositories/tenants.repository'
import { requirePermission } from '../domain/access'
import type { Actor } from '../domain/actor'
import { toIsoString } from '../domain/dates'
import { BusinessRuleError, NotFoundError } from '../domain/errors'
import { uuidPathId } from '../domain/ids'
import type { ServiceContext } from './service-context'
import { emitEvent } from './webhook-events'
import { audit } from './audit'
import { offsetOf, toPage } from '../domain/pagination'

/** The wire form of a member row joined with its user. */
export function toMember(row: MemberWithUserRow): TenantMember {
  const user: User = { id: row.user_id }
  if (row.user_email !== null) user.email = row.user_email
  if (row.user_first_name !== null) user.first_name = row.user_first_name
  if (row.user_last_name !== null) user.last_name = row.user_last_name
  if (row.user_picture !== null) user.picture = row.user_picture
  const member: TenantMember = { id: row.id, tenant_id: row.tenant_id, role: row.role, user, created_at: toIsoString(Number(row.created_at)) }
  if (row.created_by !== null) member.created_by = row.created_by
  if (row.modified_by !== null) member.modified_by = row.modified_by
  if (row.modified_at !== null) member.modified_at = toIsoString(Number(row.modified_at))
  return member
}

export class MembersService {
  constructor(private readonly context: ServiceContext) {}

  /** `GET /tenants/self/members`: newest first, optionally only some users. */
  async list(actor: Actor, q: ListMembersQuery): Promise<Page<TenantMember>> {
    requirePermission(actor, 'tenant:member:read')
    const filter = { tenantId: actor.tenantId, userIds: q.user_id }
    const { reader } = this.context
    const [total, rows] = await Promise.all([countMembers(reader, filter), listMembers(reader, filter, q.size, offsetOf(q))])
    return toPage(rows.map(toMember), total, q)
  }

  /** `DELETE /tenants/self/members/{id}`: revokes a member; the OWNER is a 422. */
  async delete(actor: Actor, rawId: string): Promise<void> {
    requirePermission(actor, 'tenant:member:delete')
    const id = uuidPathId(rawId, 'Member')
    const now = this.context.clock.now()
    await this.context.writes.run(async (trx) => {
      const member = await findMember(trx, actor.tenantId, id)
      if (!member) throw new NotFoundError('Member')
      if (member.role === 'OWNER') throw new BusinessRuleError('The tenant OWNER cannot be deleted.')
      await deleteMember(trx, actor.tenantId, id)
      audit(trx, now, [{ actor, entityType: 'member', entityId: id, operation: 'delete', message: 'Member deleted' }])
      emitEvent(this.context, trx, now, 'tenant.member.deleted', actor, { id, tenant_id: actor.tenantId, user_id: member.user_id, role: member.role })
    })
  }

  /** Whether `userId` is (still) a member of the tenant: the desktop app checks this before acting as the user. */
  async isActiveMember(tenantId: string, userId: string): Promise<boolean> {
    if (!z.uuid().safeParse(userId).success) return false
    return (await findMemberByUser(this.context.reader, tenantId, userId.toLowerCase())) !== undefined
  }
}
