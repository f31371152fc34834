/**
 * Applications: API keys with their permissions and rules (spec "Applications").
 * An application holds any number of keys (Basis Theory's application keys);
 * each is shown once, in the response that created it, and stored only as a
 * keyed hash. Every key of an application stands for the same actor.
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
import type { AccessRule, Application, ApplicationKey, ApplicationType, Page, Permission } from '../../shared/types'
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
import {
  deleteApplicationKey,
  deleteOtherApplicationKeys,
  findApplicationKey,
  insertApplicationKey,
  listKeysOfApplications,
  type ApplicationKeyRecord,
  type ApplicationKeySummary
} from '../storage/repositories/application-keys.repository'
import { listSessionsAuthorizedBy, listSessionsOfApplication } from '../storage/repositories/sessions.repository'
import { requirePermission } from '../domain/access'
import { applicationActor, type AuthService } from './auth.service'
import type { Actor } from '../domain/actor'
import { parseExpiresAt, toIsoString } from '../domain/dates'
import { BusinessRuleError, ForbiddenError, NotFoundError } from '../domain/errors'
import { uuidPathId } from '../domain/ids'
import { normalisePermissions, normaliseRules, requireSomeGrant } from '../domain/grants'
import type { ServiceContext } from './service-context'
import { emitEvent } from './webhook-events'
import { audit, type AuditOperation } from './audit'
import { offsetOf, toPage } from '../domain/pagination'
import { revokeSessions, sessionsBeyondGrant } from './sessions.service'
import { parse } from '../domain/validation'
import { notifyChange } from '../storage/change-feed'

/** A key that was just made: its stored row and its value, shown once. */
export interface NewKey {
  record: ApplicationKeyRecord
  key: string
}

function toApplicationKey(row: ApplicationKeySummary, key?: string): ApplicationKey {
  return {
    id: row.id,
    ...(key !== undefined ? { key } : {}),
    ...(row.created_by ? { created_by: row.created_by } : {}),
    created_at: toIsoString(Number(row.created_at))
  }
}

/** The application with its keys; the value of `fresh`, a key just made, is shown this once. */
/** An application as webhook events carry it: never a key, not even a key id list. */
function applicationEventData(row: ApplicationRecord): Record<string, unknown> {
  const { keys: _keys, key: _key, ...application } = toApplication(row, [])
  return application
}

/** A new key as webhook events carry it: its id and application, never its value. */
function keyEventData(application: ApplicationRecord, key: ApplicationKeySummary): Record<string, unknown> {
  const { key: _value, ...view } = toApplicationKey(key)
  return { ...view, application_id: application.id, tenant_id: application.tenant_id }
}

function toApplication(row: ApplicationRecord, keys: ApplicationKeySummary[], fresh?: NewKey): Application {
  const application: Application = {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    ...(fresh ? { key: fresh.key } : {}),
    type: row.type,
    permissions: row.permissions,
    rules: row.rules,
    created_at: toIsoString(Number(row.created_at)),
    keys: keys.map((key) => toApplicationKey(key, key.id === fresh?.record.id ? fresh.key : undefined))
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

/** A new key of `application`: returned once, stored only as a keyed hash. */
export function newApplicationKey(application: Pick<ApplicationRecord, 'id' | 'tenant_id' | 'type'>, secretHashKey: SecretHashKey, createdBy: string, now: number): NewKey {
  const key = generateSecret(`key_${application.type}`)
  return {
    record: { id: newId(), tenant_id: application.tenant_id, application_id: application.id, key_hash: hashSecret(secretHashKey, key), created_by: createdBy, created_at: now },
    key
  }
}

/** A new application's row and its first key. */
export function newApplicationRecord(app: NewApplication, secretHashKey: SecretHashKey, now: number): { row: ApplicationRecord; firstKey: NewKey } {
  const row: ApplicationRecord = {
    id: newId(),
    tenant_id: app.tenantId,
    name: app.name,
    type: app.type,
    permissions: app.permissions,
    rules: app.rules,
    expires_at: app.expiresAt,
    created_by: app.createdBy,
    created_at: now,
    modified_by: null,
    modified_at: null
  }
  return { row, firstKey: newApplicationKey(row, secretHashKey, app.createdBy, now) }
}

function keyCreatedEntry(actor: Actor, key: ApplicationKeyRecord) {
  return { actor, entityType: 'application' as const, entityId: key.application_id, operation: 'create' as const, message: `Application key ${key.id} created` }
}

function isExpired(row: ApplicationRecord, now: number): boolean {
  return row.expires_at !== null && Number(row.expires_at) <= now
}

/** Every permission a grant names, plainly or through its rules. */
function grantedPermissions(grant: { permissions: readonly Permission[]; rules: readonly AccessRule[] }): Permission[] {
  return [...grant.permissions, ...grant.rules.flatMap((rule) => rule.permissions)]
}

/** The management permissions of a grant that `actor` does not hold. */
function managementPermissionsBeyond(actor: Actor, grant: { permissions: readonly Permission[]; rules: readonly AccessRule[] }): Permission[] {
  if (actor.isMember) return []
  const missing = grantedPermissions(grant).filter(
    (permission) => (MANAGEMENT_PERMISSIONS as readonly string[]).includes(permission) && !actor.permissions.includes(permission)
  )
  return [...new Set(missing)]
}

/** 403 unless `actor` holds every management permission of the grant. */
function requireHeldManagementPermissions(actor: Actor, grant: { permissions: readonly Permission[]; rules: readonly AccessRule[] }): void {
  const missing = managementPermissionsBeyond(actor, grant)
  if (missing.length) throw new ForbiddenError(`The caller cannot grant permissions it does not hold: ${missing.join(', ')}.`)
}

/**
 * 403 when the application holds management permissions `actor` does not:
 * replacing its grant, deleting one of its keys or the application itself
 * would let a lesser caller strip or lock out a more privileged one.
 */
function requireNoMorePrivileged(actor: Actor, application: ApplicationRecord): void {
  const missing = managementPermissionsBeyond(actor, application)
  if (missing.length) throw new ForbiddenError(`The caller cannot change an application holding permissions it does not hold: ${missing.join(', ')}.`)
}

export class ApplicationsService {
  constructor(
    private readonly context: ServiceContext,
    private readonly auth: AuthService
  ) {}

  /** `POST /applications`: the new application, with its first key (shown only here) unless `create_key` is false. */
  async create(actor: Actor, input: CreateApplicationInput): Promise<Application> {
    requirePermission(actor, 'application:create')
    const now = this.context.clock.now()
    const expiresAt = input.expires_at === undefined ? null : parseExpiresAt(input.expires_at, 'expires_at', new Date(now)).getTime()
    requireSomeGrant(input)
    const grant = { permissions: normalisePermissions(input.permissions), rules: normaliseRules(input.rules) }
    requireHeldManagementPermissions(actor, grant)
    const { row, firstKey } = newApplicationRecord(
      { tenantId: actor.tenantId, name: input.name, type: input.type, ...grant, expiresAt, createdBy: actor.id },
      this.context.keyring.secretHashKey,
      now
    )
    const withKey = input.create_key !== false
    await this.context.writes.run(async (trx) => {
      await insertApplication(trx, row)
      if (withKey) await insertApplicationKey(trx, firstKey.record)
      // One entry for both: the first key is part of the application's creation.
      const message = withKey ? `Application created with key ${firstKey.record.id}` : 'Application created without a key'
      audit(trx, now, [{ actor, entityType: 'application', entityId: row.id, operation: 'create', message }])
      emitEvent(this.context, trx, now, 'application.created', actor, applicationEventData(row))
      await notifyChange(trx, { kind: 'application', ids: [row.id] })
    })
    return withKey ? toApplication(row, [firstKey.record], firstKey) : toApplication(row, [])
  }

  /** `GET /applications`: newest first, filtered by `id` and `type` (both repeatable); expired ones are left out. */
  async list(actor: Actor, q: ListApplicationsQuery): Promise<Page<Application>> {
    requirePermission(actor, 'application:read')
    const filter = { tenantId: actor.tenantId, ids: q.id, types: q.type, activeAt: this.context.clock.now() }
    const [total, rows] = await Promise.all([
      countApplications(this.context.reader, filter),
      listApplications(this.context.reader, filter, q.size, offsetOf(q))
    ])
    const keys = await listKeysOfApplications(
      this.context.reader,
      actor.tenantId,
      rows.map((row) => row.id)
    )
    return toPage(
      rows.map((row) => toApplication(row, keys.filter((key) => key.application_id === row.id))),
      total,
      q
    )
  }

  /** `GET /applications/{id}`. */
  async get(actor: Actor, id: string): Promise<Application> {
    return this.withKeys(await this.read(actor, id))
  }

  /** `GET /applications/key`: the application whose key made the call. */
  async getByKey(actor: Actor): Promise<Application> {
    requirePermission(actor, 'application:read')
    if (actor.type !== 'application') throw new NotFoundError('Application')
    return this.withKeys(await this.read(actor, actor.id))
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
    requireNoMorePrivileged(actor, existing)
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
    const updated = await this.writeChange(actor, existing.id, requireNoMorePrivileged, changes, 'update', 'Application updated', now, async (trx, changed) => {
      // Sessions it authorized live on only while it still holds what it granted them.
      const beyond = sessionsBeyondGrant(applicationActor(changed), await listSessionsAuthorizedBy(trx, changed.id))
      return revokeSessions(trx, actor, beyond, 'Session revoked: its authorizing application no longer holds what it granted', now)
    })
    return this.withKeys(updated)
  }

  /** `POST /applications/{id}/regenerate`: a new key, every other key deleted; they stop working at once. */
  async regenerate(actor: Actor, id: string): Promise<Application> {
    requirePermission(actor, 'application:update')
    const existing = await this.findLive(actor.tenantId, id)
    requireHeldManagementPermissions(actor, existing)
    const now = this.context.clock.now()
    const fresh = newApplicationKey(existing, this.context.keyring.secretHashKey, actor.id, now)
    const changes = { modified_by: actor.id, modified_at: now }
    const regenerated = await this.writeChange(actor, existing.id, requireHeldManagementPermissions, changes, 'regenerate', 'Application key regenerated', now, async (trx) => {
      await insertApplicationKey(trx, fresh.record)
      await deleteOtherApplicationKeys(trx, actor.tenantId, existing.id, fresh.record.id)
      return revokeSessions(trx, actor, await listSessionsOfApplication(trx, existing.id), 'Session revoked: its application got a new key', now)
    })
    return toApplication(regenerated, [fresh.record], fresh)
  }

  /** `POST /applications/{id}/keys`: one more key; the others keep working. */
  async createKey(actor: Actor, id: string): Promise<ApplicationKey> {
    requirePermission(actor, 'application:update')
    const existing = await this.findLive(actor.tenantId, id)
    // A new key is a way into the application's grant, as a regenerated one is.
    requireHeldManagementPermissions(actor, existing)
    const now = this.context.clock.now()
    const fresh = newApplicationKey(existing, this.context.keyring.secretHashKey, actor.id, now)
    await this.context.writes.run(async (trx) => {
      // Deleted meanwhile: a 404, not a foreign-key failure.
      await this.liveIn(trx, actor, existing.id, requireHeldManagementPermissions)
      await insertApplicationKey(trx, fresh.record)
      audit(trx, now, [keyCreatedEntry(actor, fresh.record)])
      emitEvent(this.context, trx, now, 'application.key.created', actor, keyEventData(existing, fresh.record))
    })
    return toApplicationKey(fresh.record, fresh.key)
  }

  /** `GET /applications/{id}/keys`: every key, oldest first, without values; logged as a read of the application. */
  async listKeys(actor: Actor, id: string): Promise<ApplicationKey[]> {
    requirePermission(actor, 'application:read')
    const existing = await this.findLive(actor.tenantId, id)
    const keys = await listKeysOfApplications(this.context.reader, actor.tenantId, [existing.id])
    await this.logRead(actor, existing.id, 'Application keys listed')
    return keys.map((key) => toApplicationKey(key))
  }

  /** `GET /applications/{id}/keys/{keyId}`, without its value. */
  async getKey(actor: Actor, id: string, keyId: string): Promise<ApplicationKey> {
    requirePermission(actor, 'application:read')
    const existing = await this.findLive(actor.tenantId, id)
    const key = await findApplicationKey(this.context.reader, actor.tenantId, existing.id, uuidPathId(keyId, 'Application key'))
    if (!key) throw new NotFoundError('Application key')
    await this.logRead(actor, existing.id, `Application key ${key.id} retrieved`)
    return toApplicationKey(key)
  }

  private async logRead(actor: Actor, applicationId: string, message: string): Promise<void> {
    await audit(this.context.writes, this.context.clock.now(), [{ actor, entityType: 'application', entityId: applicationId, operation: 'read', message }])
  }

  /** `DELETE /applications/{id}/keys/{keyId}`: that key stops working at once; the application and its other keys stay. */
  async deleteKey(actor: Actor, id: string, keyId: string): Promise<void> {
    requirePermission(actor, 'application:update')
    const existing = await this.findLive(actor.tenantId, id)
    requireNoMorePrivileged(actor, existing)
    const now = this.context.clock.now()
    const keyUuid = uuidPathId(keyId, 'Application key')
    await this.context.writes.run(async (trx) => {
      await this.liveIn(trx, actor, existing.id, requireNoMorePrivileged)
      if (!(await deleteApplicationKey(trx, actor.tenantId, existing.id, keyUuid))) throw new NotFoundError('Application key')
      audit(trx, now, [
        { actor, entityType: 'application', entityId: existing.id, operation: 'delete', message: `Application key ${keyUuid} deleted` }
      ])
      emitEvent(this.context, trx, now, 'application.key.deleted', actor, { id: keyUuid, application_id: existing.id, tenant_id: existing.tenant_id })
      await notifyChange(trx, { kind: 'application', ids: [existing.id] })
    })
    // The cache is keyed by key value, which is not stored: forget every key of the application; the others load again.
    this.forget([existing.id])
  }

  private async withKeys(row: ApplicationRecord): Promise<Application> {
    return toApplication(row, await listKeysOfApplications(this.context.reader, row.tenant_id, [row.id]))
  }

  /** `DELETE /applications/{id}`: its key stops working at once. */
  async delete(actor: Actor, id: string): Promise<void> {
    requirePermission(actor, 'application:delete')
    const existing = await this.findLive(actor.tenantId, id)
    requireNoMorePrivileged(actor, existing)
    const now = this.context.clock.now()
    const sessionIds = await this.context.writes.run(async (trx) => {
      const current = await this.liveIn(trx, actor, existing.id, requireNoMorePrivileged)
      if (!(await deleteApplication(trx, actor.tenantId, current.id))) throw new NotFoundError('Application')
      audit(trx, now, [{ actor, entityType: 'application', entityId: current.id, operation: 'delete', message: 'Application deleted' }])
      emitEvent(this.context, trx, now, 'application.deleted', actor, applicationEventData(current))
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
      for (const row of rows) emitEvent(this.context, trx, now, 'application.deleted', null, { id: row.id, tenant_id: row.tenant_id }, row.tenant_id)
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
    await this.logRead(actor, row.id, 'Application retrieved')
    return row
  }

  /** The application, unless it is unknown, in another tenant or expired (404). A malformed id is simply not found. */
  private async findLive(tenantId: string, id: string): Promise<ApplicationRecord> {
    return this.live(await findApplication(this.context.reader, tenantId, uuidPathId(id, 'Application')))
  }

  /**
   * The application as a change's transaction reads it, with `check` passed against it. The checks made
   * before the transaction saw the row as it was then: a concurrent update may since have granted it
   * permissions the caller lacks, and a change made on that sight would act on it as on a lesser one.
   */
  private async liveIn(trx: Tx, actor: Actor, id: string, check: (actor: Actor, application: ApplicationRecord) => void): Promise<ApplicationRecord> {
    const row = this.live(await findApplication(trx, actor.tenantId, id))
    check(actor, row)
    return row
  }

  private live(row: ApplicationRecord | undefined): ApplicationRecord {
    if (!row || isExpired(row, this.context.clock.now())) throw new NotFoundError('Application')
    return row
  }

  /**
   * Applies `changes` to the application, once `check` passes against it as the transaction reads it,
   * with its log entry and the revocation of the sessions that must end with it, in one transaction;
   * then drops the cached actors of the old key or grants and of those sessions. Returns the changed application.
   */
  private async writeChange(
    actor: Actor,
    id: string,
    check: (actor: Actor, application: ApplicationRecord) => void,
    changes: Partial<ApplicationRecord>,
    operation: AuditOperation,
    message: string,
    now: number,
    revokeDependentSessions: (trx: Tx, changed: ApplicationRecord) => Promise<string[]>
  ): Promise<ApplicationRecord> {
    const { changed, sessionIds } = await this.context.writes.run(async (trx) => {
      const changed = { ...(await this.liveIn(trx, actor, id, check)), ...changes }
      if (!(await updateApplication(trx, actor.tenantId, id, changes))) throw new NotFoundError('Application')
      audit(trx, now, [{ actor, entityType: 'application', entityId: id, operation, message }])
      const event = operation === 'regenerate' ? 'application.key.regenerated' : 'application.updated'
      emitEvent(this.context, trx, now, event, actor, applicationEventData(changed))
      await notifyChange(trx, { kind: 'application', ids: [id] })
      return { changed, sessionIds: await revokeDependentSessions(trx, changed) }
    })
    this.forget([id, ...sessionIds])
    return changed
  }

}
