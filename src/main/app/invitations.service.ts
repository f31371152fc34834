/**
 * Tenant invitations (spec "Tenant invitations" and its state table).
 *
 * Each invitation has at most one valid link: a one-time secret stored only as
 * a keyed hash (`link_hash`). Create and resend put a fresh link in a mail that
 * is queued in the outbox in the same transaction; resend and delete replace or
 * drop the hash, and cancel mail still waiting, so an earlier link never works
 * and is never delivered. Accepting consumes the invitation: the row is
 * deleted and the invitee becomes an ADMIN member.
 *
 * `EXPIRED` is derived from `expires_at` on every read; the expiry job also
 * persists it (and cancels waiting mail).
 */
import type { Tx } from '../storage/connections'
import type { AcceptInvitationInput, CreateInvitationInput, ListInvitationsQuery } from '../../shared/contracts'
import type { Page, TenantInvitation, TenantMember } from '../../shared/types'
import { newId } from '../crypto/random'
import { generateSecret, hashSecret } from '../crypto/secrets'
import {
  countInvitations,
  deleteInvitation,
  findInvitation,
  findInvitationByEmail,
  findInvitationByLinkHash,
  insertInvitation,
  listInvitations,
  markExpiredInvitations,
  updateInvitation,
  type InvitationRow
} from '../storage/repositories/invitations.repository'
import { findMemberByEmail } from '../storage/repositories/members.repository'
import { cancelInvitationMails } from '../storage/repositories/outbox.repository'
import { findMemberByUser, findTenant, findUserByEmail, insertMember, insertUser, updateUser, type MemberRow, type UserRow } from '../storage/repositories/tenants.repository'
import { requirePermission } from '../domain/access'
import type { Actor } from '../domain/actor'
import { toIsoString } from '../domain/dates'
import { ConflictError, InvitationExpiredError, InvitationLinkInvalidError, NotFoundError } from '../domain/errors'
import { uuidPathId } from '../domain/ids'
import { escapeHtml } from '../infra/html'
import type { ServiceContext } from './service-context'
import { emitEvent } from './webhook-events'
import { audit } from './audit'
import type { MailBody, MailService } from './mail.service'
import { toMember } from './members.service'
import { offsetOf, toPage } from '../domain/pagination'

/** Lifetime of an invitation, and how far a resend extends it (spec "Limits"). */
export const INVITATION_LIFETIME_MS = 72 * 60 * 60_000

/** Path of the acceptance page and endpoint; the mail's link is this path plus `?token=`. */
export const ACCEPT_PATH = '/invitations/accept'

const LINK_SECRET_PREFIX = 'inv'

/** What the acceptance page shows about a valid link. */
export interface InvitationLinkInfo {
  tenant_name: string
  email: string
  expires_at: string
}

function toInvitation(row: InvitationRow, now: number): TenantInvitation {
  const expiresAt = Number(row.expires_at)
  const invitation: TenantInvitation = {
    id: row.id,
    tenant_id: row.tenant_id,
    email: row.email,
    status: expiresAt <= now ? 'EXPIRED' : 'PENDING',
    expires_at: toIsoString(expiresAt),
    created_at: toIsoString(Number(row.created_at))
  }
  if (row.created_by !== null) invitation.created_by = row.created_by
  if (row.modified_by !== null) invitation.modified_by = row.modified_by
  if (row.modified_at !== null) invitation.modified_at = toIsoString(Number(row.modified_at))
  return invitation
}

const duplicateInvitation = () => new ConflictError('An invitation for this e-mail address already exists; resend it instead.')

export class InvitationsService {
  constructor(
    private readonly context: ServiceContext,
    private readonly mail: MailService
  ) {}

  /** `POST /tenants/self/invitations`: a PENDING invitation for 72 hours, and its mail. */
  async create(actor: Actor, { email }: CreateInvitationInput): Promise<TenantInvitation> {
    requirePermission(actor, 'tenant:invitation:create')
    const now = this.context.clock.now()
    const link = this.newLink()
    const row: InvitationRow = {
      id: newId(),
      tenant_id: actor.tenantId,
      email,
      status: 'PENDING',
      link_hash: link.hash,
      expires_at: now + INVITATION_LIFETIME_MS,
      created_by: actor.id,
      created_at: now,
      modified_by: null,
      modified_at: null
    }
    const tenantName = await this.tenantName(actor.tenantId)
    await this.context.writes.run(async (trx) => {
      if (await findMemberByEmail(trx, actor.tenantId, email)) throw new ConflictError('This e-mail address already belongs to a member of the tenant.')
      if (await findInvitationByEmail(trx, actor.tenantId, email)) throw duplicateInvitation()
      // The check above answers most duplicates; the unique index, one created at the same moment on another instance.
      await insertInvitation(trx, row, duplicateInvitation)
      await this.mail.enqueue(trx, this.invitationMail(row, tenantName, link.url), now)
      audit(trx, now, [{ actor, entityType: 'invitation', entityId: row.id, operation: 'create', message: 'Invitation created' }])
      emitEvent(this.context, trx, now, 'tenant.invitation.created', actor, toInvitation(row, now))
    })
    this.mail.kick()
    return toInvitation(row, now)
  }

  /**
   * `POST /tenants/self/invitations/{id}/resend`: PENDING again, `expires_at` =
   * max(expires_at, now) + 72 h, a new link; earlier links stop working.
   */
  async resend(actor: Actor, rawId: string): Promise<TenantInvitation> {
    requirePermission(actor, 'tenant:invitation:create', 'tenant:invitation:update')
    const id = uuidPathId(rawId, 'Invitation')
    const now = this.context.clock.now()
    const link = this.newLink()
    const tenantName = await this.tenantName(actor.tenantId)
    const updated = await this.context.writes.run(async (trx) => {
      const current = await findInvitation(trx, actor.tenantId, id)
      if (!current) throw new NotFoundError('Invitation')
      const changes = {
        status: 'PENDING' as const,
        link_hash: link.hash,
        expires_at: Math.max(Number(current.expires_at), now) + INVITATION_LIFETIME_MS,
        modified_by: actor.id,
        modified_at: now
      }
      const row = { ...current, ...changes }
      await updateInvitation(trx, actor.tenantId, id, changes)
      await cancelInvitationMails(trx, [id])
      await this.mail.enqueue(trx, this.invitationMail(row, tenantName, link.url), now)
      audit(trx, now, [{ actor, entityType: 'invitation', entityId: id, operation: 'resend', message: 'Invitation resent' }])
      emitEvent(this.context, trx, now, 'tenant.invitation.resent', actor, toInvitation(row, now))
      return row
    })
    this.mail.kick()
    return toInvitation(updated, now)
  }

  /** `GET /tenants/self/invitations`: newest first, optionally by derived status. */
  async list(actor: Actor, q: ListInvitationsQuery): Promise<Page<TenantInvitation>> {
    requirePermission(actor, 'tenant:invitation:read')
    const now = this.context.clock.now()
    const filter = { tenantId: actor.tenantId, status: q.status, now }
    const { reader } = this.context
    const [total, rows] = await Promise.all([countInvitations(reader, filter), listInvitations(reader, filter, q.size, offsetOf(q))])
    return toPage(
      rows.map((row) => toInvitation(row, now)),
      total,
      q
    )
  }

  /** `GET /tenants/self/invitations/{id}`. */
  async get(actor: Actor, rawId: string): Promise<TenantInvitation> {
    requirePermission(actor, 'tenant:invitation:read')
    const id = uuidPathId(rawId, 'Invitation')
    const now = this.context.clock.now()
    const row = await findInvitation(this.context.reader, actor.tenantId, id)
    if (!row) throw new NotFoundError('Invitation')
    await audit(this.context.writes, now, [{ actor, entityType: 'invitation', entityId: id, operation: 'read', message: 'Invitation retrieved' }])
    return toInvitation(row, now)
  }

  /** `DELETE /tenants/self/invitations/{id}`: its link stops working and waiting mail is cancelled. */
  async delete(actor: Actor, rawId: string): Promise<void> {
    requirePermission(actor, 'tenant:invitation:delete')
    const id = uuidPathId(rawId, 'Invitation')
    const now = this.context.clock.now()
    await this.context.writes.run(async (trx) => {
      if (!(await deleteInvitation(trx, actor.tenantId, id))) throw new NotFoundError('Invitation')
      await cancelInvitationMails(trx, [id])
      audit(trx, now, [{ actor, entityType: 'invitation', entityId: id, operation: 'delete', message: 'Invitation deleted' }])
      emitEvent(this.context, trx, now, 'tenant.invitation.deleted', actor, { id, tenant_id: actor.tenantId })
    })
  }

  /** What the acceptance page shows for a link (404 invalid, 410 expired). No API key: the link's secret is the credential. */
  async describeLink(secret: string): Promise<InvitationLinkInfo> {
    const invitation = this.checkLink(await findInvitationByLinkHash(this.context.reader, this.hashLink(secret)), this.context.clock.now())
    return { tenant_name: await this.tenantName(invitation.tenant_id), email: invitation.email, expires_at: toIsoString(Number(invitation.expires_at)) }
  }

  /**
   * `POST /invitations/accept` (no API key): the invitee, named in the body,
   * becomes an ADMIN member; the user is created or, for a known e-mail, reused.
   * The invitation is consumed. 404 invalid link, 410 expired, 409 already a member.
   */
  async accept(input: AcceptInvitationInput, traceId?: string): Promise<TenantMember> {
    const now = this.context.clock.now()
    const linkHash = this.hashLink(input.token)
    const newUserId = newId()
    const memberId = newId()
    const { member, user } = await this.context.writes.run(async (trx) => {
      const invitation = this.checkLink(await findInvitationByLinkHash(trx, linkHash), now)
      const tenantId = invitation.tenant_id
      const user = await this.acceptingUser(trx, invitation.email, input, newUserId, now)
      if (await findMemberByUser(trx, tenantId, user.id)) throw new ConflictError('This user is already a member of the tenant.')
      const member: MemberRow = {
        id: memberId,
        tenant_id: tenantId,
        user_id: user.id,
        role: 'ADMIN',
        created_by: invitation.created_by ?? user.id,
        created_at: now,
        modified_by: null,
        modified_at: null
      }
      await insertMember(trx, member)
      await deleteInvitation(trx, tenantId, invitation.id)
      await cancelInvitationMails(trx, [invitation.id])
      // No API key here: the new member is the actor, and the REST request's trace id (if any) is recorded with them.
      const actor = { type: 'user' as const, id: user.id, tenantId, traceId }
      audit(trx, now, [
        { actor, entityType: 'invitation', entityId: invitation.id, operation: 'accept', message: 'Invitation accepted' },
        { actor, entityType: 'member', entityId: member.id, operation: 'create', message: 'Member created' }
      ])
      const accepted = { id: invitation.id, tenant_id: tenantId, email: invitation.email, member_id: member.id, user_id: user.id, role: member.role }
      emitEvent(this.context, trx, now, 'tenant.invitation.accepted', actor, accepted)
      return { member, user }
    })
    return toMember({
      ...member,
      user_email: user.email,
      user_first_name: user.first_name,
      user_last_name: user.last_name,
      user_picture: user.picture
    })
  }

  /** Persists EXPIRED on pending invitations past `expires_at` and cancels their waiting mail (the expiry job). */
  async expireDue(now: number, limit: number): Promise<number> {
    return this.context.writes.run(async (trx) => {
      const due = await markExpiredInvitations(trx, now, limit)
      await cancelInvitationMails(
        trx,
        due.map((invitation) => invitation.id)
      )
      audit(
        trx,
        now,
        due.map((invitation) => ({ actor: null, tenantId: invitation.tenant_id, entityType: 'invitation', entityId: invitation.id, operation: 'expire', message: 'Invitation expired' }))
      )
      return due.length
    })
  }

  /** The existing user with this e-mail (missing names filled in), or a new one. */
  private async acceptingUser(
    trx: Tx,
    email: string,
    names: { first_name: string; last_name: string },
    newUserId: string,
    now: number
  ): Promise<UserRow> {
    const existing = await findUserByEmail(trx, email)
    if (!existing) {
      const user: UserRow = { id: newUserId, email, first_name: names.first_name, last_name: names.last_name, picture: null, created_at: now }
      await insertUser(trx, user)
      return user
    }
    const filled = { first_name: existing.first_name ?? names.first_name, last_name: existing.last_name ?? names.last_name }
    if (filled.first_name !== existing.first_name || filled.last_name !== existing.last_name) await updateUser(trx, existing.id, filled)
    return { ...existing, ...filled }
  }

  private checkLink(invitation: InvitationRow | undefined, now: number): InvitationRow {
    if (!invitation) throw new InvitationLinkInvalidError()
    if (Number(invitation.expires_at) <= now) throw new InvitationExpiredError()
    return invitation
  }

  private newLink(): { hash: string; url: string } {
    const secret = generateSecret(LINK_SECRET_PREFIX)
    return { hash: this.hashLink(secret), url: this.mail.publicUrl(`${ACCEPT_PATH}?token=${encodeURIComponent(secret)}`) }
  }

  private hashLink(secret: string): string {
    return hashSecret(this.context.keyring.secretHashKey, secret)
  }

  private async tenantName(tenantId: string): Promise<string> {
    return (await findTenant(this.context.reader, tenantId))?.name ?? 'Tessera'
  }

  private invitationMail(invitation: InvitationRow, tenantName: string, link: string) {
    const expires = toIsoString(Number(invitation.expires_at))
    const body: MailBody = {
      link,
      text: [
        'Hello,',
        '',
        `You are invited to join the tenant "${tenantName}" on Tessera as an administrator.`,
        '',
        'Accept the invitation here:',
        link,
        '',
        `The link works once and expires at ${expires}. If you did not expect this invitation, ignore this e-mail.`,
        ''
      ].join('\n'),
      html: [
        '<p>Hello,</p>',
        `<p>You are invited to join the tenant <strong>${escapeHtml(tenantName)}</strong> on Tessera as an administrator.</p>`,
        `<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>`,
        `<p>The link works once and expires at ${expires}. If you did not expect this invitation, ignore this e-mail.</p>`
      ].join('\n')
    }
    return { tenantId: invitation.tenant_id, recipient: invitation.email, subject: `Invitation to join ${tenantName} on Tessera`.slice(0, 300), body, invitationId: invitation.id }
  }
}
