/**
 * Applications: API keys with their permissions and rules (spec "Applications").
 * Keys are shown once, in the create and regenerate responses, and
 * stored only as keyed hashes.
 *
 * Decisions beyond the spec:
 * - An application whose `expires_at` has passed is treated as deleted at once
 *   (the spec's state table moves it to "deleted" when `expires_at` is reached):
 *   get, list, update, regenerate and delete no longer see it, and AuthService
 *   already rejects its key. The row itself stays until the expiry sweep
 *   (`expireDue`) removes it and logs the deletion.
 * - Reads of one application (get, get by key) write a "read" log entry; the list
 *   does not, since it names no single entity and shows no secret.
 * - `GET /applications/key` needs `application:read` like the other reads, so it
 *   is for management keys; a session lacks the permission (403), and the desktop
 *   user, who has no application behind it, gets a 404.
 * - A caller cannot grant, or take over by regenerating a key, management
 *   permissions it does not hold itself (403), so `application:create` or
 *   `application:update` alone cannot escalate to the full management set.
 * - `expires_at` takes the same formats as a token's (ISO 8601 among them).
 */
import type { Tx } from '../storage/connections'
import { updateApplicationBody, type CreateApplicationInput, type ListApplicationsQuery, type PermissionsQuery, type UpdateApplicationInput } from '../../shared/contracts'
import { MANAGEMENT_PERMISSIONS, PERMISSIONS_BY_APPLICATION_TYPE, TOKEN_PERMISSIONS } from '../../shared/permissions'
import type { AccessRule, Application, ApplicationType, Page, Permission } from '../../shared/types'
import { newId } from '../crypto/random'
import { generateSecret, hashSecret } from '../crypto/secrets'
import type { SecretHashKey } from '../crypto/types'
import {
  countApplications,
  deleteApplication,
  findApplication,
  insertApplication,
  listApplications,
  deleteExpiredApplications,
  updateApplication,
  type ApplicationRecord
} from '../storage/repositories/applications.repository'
import { listSessionsAuthorizedBy, listSessionsOfApplication } from '../storage/repositories/sessions.repository'
import { requirePermission } from '../domain/access'
import { applicationActor, type AuthService } from './auth.service'
import type { Actor } from '../domain/actor'
import { parseExpiresAt, toIsoString } from '../domain/dates'
import { BusinessRuleError, ForbiddenError, NotFoundError } from '../domain/errors'
import { uuidPathId } from '../domain/ids'
import { normalisePermissions, normaliseRules, requireSomeGrant } from '../domain/grants'
import type { ServiceContext } from './service-context'
import { audit, type AuditOperation } from './audit'
import { offsetOf, toPage } from '../domain/pagination'
import { revokeSessions, sessionsBeyondGrant } from './sessions.service'
import { parse } from '../domain/validation'
import { notifyChange } from '../storage/change-feed'

function toApplication(row: ApplicationRecord, key?: string): Application {
  const application: Application = {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    ...(key !== undefined ? { key } : {}),
    type: row.type,
    permissions: row.permissions,
    rules: row.rules,
    created_at: toIsoString(Number(row.created_at))
  }
  if (row.created_by) application.created_by = row.created_by
  if (row.modified_by) application.modified_by = row.modified_by
  if (row.modified_at !== null) application.modified_at = toIsoString(Number(row.modified_at))
  if (row.expires_at !== null) application.expires_at = toIsoString(Number(row.expires_at))
  return application
}

export interface NewApplication {
  tenantId: string
  name: string
  type: ApplicationType
  permissions: Permission[]
  rules: AccessRule[]
  expiresAt: number | null
  createdBy: string
}

/** A new application's row and its key, which is returned once and stored only as a keyed hash. */
export function newApplicationRecord(app: NewApplication, secretHashKey: SecretHashKey, now: number): { row: ApplicationRecord; key: string } {
  const key = generateSecret(`key_${app.type}`)
  const row: ApplicationRecord = {
    id: newId(),
    tenant_id: app.tenantId,
    name: app.name,
    type: app.type,
    permissions: app.permissions,
    rules: app.rules,
    key_hash: hashSecret(secretHashKey, key),
    expires_at: app.expiresAt,
    created_by: app.createdBy,
    created_at: now,
    modified_by: null,
    modified_at: null
  }
  return { row, key }
}

function isExpired(row: ApplicationRecord, now: number): boolean {
  return row.expires_at !== null && Number(row.expires_at) <= now
}

/** Every permission a grant names, plainly or through its rules. */
function grantedPermissions(grant: { permissions: readonly Permission[]; rules: readonly AccessRule[] }): Permission[] {
  return [...grant.permissions, ...grant.rules.flatMap((rule) => rule.permissions)]
}

/** 403 unless `actor` holds every management permission of the grant. */
function requireHeldManagementPermissions(actor: Actor, grant: { permissions: readonly Permission[]; rules: readonly AccessRule[] }): void {
  if (actor.isMember) return
  const missing = grantedPermissions(grant).filter(
    (permission) => (MANAGEMENT_PERMISSIONS as readonly string[]).includes(permission) && !actor.permissions.includes(permission)
  )
  if (missing.length) {
    throw new ForbiddenError(`The caller cannot grant permissions it does not hold: ${[...new Set(missing)].join(', ')}.`)
  }
}

export class ApplicationsService {
  constructor(
    private readonly context: ServiceContext,
    private readonly auth: AuthService
  ) {}

  /** `POST /applications`: the new application, with its key (shown only here and on regenerate). */
  async create(actor: Actor, input: CreateApplicationInput): Promise<Application> {
    requirePermission(actor, 'application:create')
    const now = this.context.clock.now()
    const expiresAt = input.expires_at === undefined ? null : parseExpiresAt(input.expires_at, 'expires_at', new Date(now)).getTime()
    requireSomeGrant(input)
    const grant = { permissions: normalisePermissions(input.permissions), rules: normaliseRules(input.rules) }
    requireHeldManagementPermissions(actor, grant)
    const { row, key } = newApplicationRecord(
      { tenantId: actor.tenantId, name: input.name, type: input.type, ...grant, expiresAt, createdBy: actor.id },
      this.context.keyring.secretHashKey,
      now
    )
    await this.context.writes.run(async (trx) => {
      await insertApplication(trx, row)
      audit(trx, now, [{ actor, entityType: 'application', entityId: row.id, operation: 'create', message: 'Application created' }])
      await notifyChange(trx, { kind: 'application', ids: [row.id] })
    })
    return toApplication(row, key)
  }

  /** `GET /applications`: newest first, filtered by `id` and `type` (both repeatable); expired ones are left out. */
  async list(actor: Actor, q: ListApplicationsQuery): Promise<Page<Application>> {
    requirePermission(actor, 'application:read')
    const filter = { tenantId: actor.tenantId, ids: q.id, types: q.type, activeAt: this.context.clock.now() }
    const [total, rows] = await Promise.all([
      countApplications(this.context.reader, filter),
      listApplications(this.context.reader, filter, q.size, offsetOf(q))
    ])
    return toPage(
      rows.map((row) => toApplication(row)),
      total,
      q
    )
  }

  /** `GET /applications/{id}`. */
  async get(actor: Actor, id: string): Promise<Application> {
    return toApplication(await this.read(actor, id))
  }

  /** `GET /applications/key`: the application whose key made the call. */
  async getByKey(actor: Actor): Promise<Application> {
    requirePermission(actor, 'application:read')
    if (actor.type !== 'application') throw new NotFoundError('Application')
    return toApplication(await this.read(actor, actor.id))
  }

  /**
   * The actor of one of the tenant's applications of `type`, for a person acting
   * through it (the desktop user creates and authorizes sessions as applications,
   * with their grants); reading it is logged, and another type is a 422.
   */
  async actingAs(person: Actor, id: string, type: ApplicationType): Promise<Actor> {
    const row = await this.read(person, id)
    if (row.type !== type) throw new BusinessRuleError(`Choose a ${type} application.`)
    return applicationActor(row)
  }

  /** `PUT /applications/{id}`: replaces name, permissions and rules; the type is fixed. */
  async update(actor: Actor, id: string, command: UpdateApplicationInput): Promise<Application> {
    requirePermission(actor, 'application:update')
    const existing = await this.findLive(actor.tenantId, id)
    // The doors checked the shape; the permission names are checked against the application's type here.
    const input = parse(updateApplicationBody(existing.type), command)
    requireSomeGrant(input)
    const grant = { permissions: normalisePermissions(input.permissions), rules: normaliseRules(input.rules) }
    requireHeldManagementPermissions(actor, grant)
    const now = this.context.clock.now()
    const changes = {
      name: input.name,
      permissions: grant.permissions,
      rules: grant.rules,
      modified_by: actor.id,
      modified_at: now
    }
    const updated = { ...existing, ...changes }
    await this.writeChange(actor, existing, changes, 'update', 'Application updated', now, async (trx) => {
      // Sessions it authorized live on only while it still holds what it granted them.
      const beyond = sessionsBeyondGrant(applicationActor(updated), await listSessionsAuthorizedBy(trx, existing.id))
      return revokeSessions(trx, actor, beyond, 'Session revoked: its authorizing application no longer holds what it granted', now)
    })
    return toApplication(updated)
  }

  /** `POST /applications/{id}/regenerate`: a new key; the previous one stops working at once. */
  async regenerate(actor: Actor, id: string): Promise<Application> {
    requirePermission(actor, 'application:update')
    const existing = await this.findLive(actor.tenantId, id)
    requireHeldManagementPermissions(actor, existing)
    const key = generateSecret(`key_${existing.type}`)
    const now = this.context.clock.now()
    const changes = { key_hash: hashSecret(this.context.keyring.secretHashKey, key), modified_by: actor.id, modified_at: now }
    await this.writeChange(actor, existing, changes, 'regenerate', 'Application key regenerated', now, async (trx) =>
      revokeSessions(trx, actor, await listSessionsOfApplication(trx, existing.id), 'Session revoked: its application got a new key', now)
    )
    return toApplication({ ...existing, ...changes }, key)
  }

  /** `DELETE /applications/{id}`: its key stops working at once. */
  async delete(actor: Actor, id: string): Promise<void> {
    requirePermission(actor, 'application:delete')
    const existing = await this.findLive(actor.tenantId, id)
    const now = this.context.clock.now()
    const sessionIds = await this.context.writes.run(async (trx) => {
      if (!(await deleteApplication(trx, actor.tenantId, existing.id))) throw new NotFoundError('Application')
      audit(trx, now, [{ actor, entityType: 'application', entityId: existing.id, operation: 'delete', message: 'Application deleted' }])
      await notifyChange(trx, { kind: 'application', ids: [existing.id] })
      return revokeSessions(trx, actor, await listSessionsOfApplication(trx, existing.id), 'Session revoked: its application was deleted', now)
    })
    this.forget([existing.id, ...sessionIds])
  }

  /** Revokes cached credentials: the applications' keys and those of the sessions they created or authorized. */
  private forget(actorIds: string[]): void {
    this.auth.evict(...actorIds)
  }

  /**
   * `GET /permissions?application_type=`: the permissions an application of
   * that type may hold, or the whole catalogue without the parameter.
   */
  listPermissions(q: PermissionsQuery): Permission[] {
    return q.application_type ? [...PERMISSIONS_BY_APPLICATION_TYPE[q.application_type]] : [...TOKEN_PERMISSIONS, ...MANAGEMENT_PERMISSIONS]
  }

  /**
   * Expiry sweep: deletes up to `limit` applications whose `expires_at` is at or
   * before `now`, logs each deletion with no actor, and forgets their keys.
   * @returns how many were deleted
   */
  async expireDue(now: number, limit: number): Promise<number> {
    const deleted = await this.context.writes.run(async (trx) => {
      const rows = await deleteExpiredApplications(trx, now, limit)
      const sessionIds: string[] = []
      for (const row of rows) {
        const sessions = await listSessionsOfApplication(trx, row.id)
        sessionIds.push(...(await revokeSessions(trx, null, sessions, 'Session revoked: its application expired', now)))
      }
      audit(
        trx,
        now,
        rows.map((row) => ({ actor: null, tenantId: row.tenant_id, entityType: 'application', entityId: row.id, operation: 'delete', message: 'Application deleted on expiry' }))
      )
      await notifyChange(trx, { kind: 'application', ids: rows.map((row) => row.id) })
      return { applicationIds: rows.map((row) => row.id), sessionIds }
    })
    this.forget([...deleted.applicationIds, ...deleted.sessionIds])
    return deleted.applicationIds.length
  }

  /** A live application of the caller's tenant, its read logged. */
  private async read(actor: Actor, id: string): Promise<ApplicationRecord> {
    requirePermission(actor, 'application:read')
    const row = await this.findLive(actor.tenantId, id)
    await audit(this.context.writes, this.context.clock.now(), [{ actor, entityType: 'application', entityId: row.id, operation: 'read', message: 'Application retrieved' }])
    return row
  }

  /** The application, unless it is unknown, in another tenant or expired (404). A malformed id is simply not found. */
  private async findLive(tenantId: string, id: string): Promise<ApplicationRecord> {
    const row = await findApplication(this.context.reader, tenantId, uuidPathId(id, 'Application'))
    if (!row || isExpired(row, this.context.clock.now())) throw new NotFoundError('Application')
    return row
  }

  /**
   * Applies `changes` with its log entry and the revocation of the sessions
   * that must end with it, in one transaction; then drops the cached actors of
   * the old key or grants and of those sessions.
   */
  private async writeChange(
    actor: Actor,
    existing: ApplicationRecord,
    changes: Partial<ApplicationRecord>,
    operation: AuditOperation,
    message: string,
    now: number,
    revokeDependentSessions: (trx: Tx) => Promise<string[]>
  ): Promise<void> {
    const sessionIds = await this.context.writes.run(async (trx) => {
      if (!(await updateApplication(trx, actor.tenantId, existing.id, changes))) throw new NotFoundError('Application')
      audit(trx, now, [{ actor, entityType: 'application', entityId: existing.id, operation, message }])
      await notifyChange(trx, { kind: 'application', ids: [existing.id] })
      return revokeDependentSessions(trx)
    })
    this.forget([existing.id, ...sessionIds])
  }

}
