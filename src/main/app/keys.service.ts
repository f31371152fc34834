/**
 * Key ceremonies. Rotation adds a data-key version per tenant that new writes
 * use at once; the `reencrypt-keys` sweep then moves every sealed object
 * (tokens, token intents, outbox mail, sealed settings, stored idempotent responses) onto it in batches, one transaction
 * each, so a pass killed at any moment resumes where the rows say it stopped.
 * A version is retired only when nothing uses it, with a report proving it.
 * A master rotation re-wraps every key; see `rotateMaster` for its crash safety.
 * Every step writes an audit entry.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, Tx } from '../storage/connections'
import type { KeyRetirementReport, KeyStatus, MasterKeyRotated, SealedCountsByVersion, SealedObjectKind, TenantKeyStatus } from '../../shared/types'
import { open, seal } from '../crypto/aead'
import { keyCheckValue } from '../crypto/keys'
import type { MasterKey } from '../crypto/types'
import type { WriteQueue } from '../storage/write-queue'
import { countSealedByVersion, listSealedOffVersion, resealObject, SEALED_KINDS } from '../storage/repositories/sealed-objects.repository'
import {
  deleteDataKey,
  discardStagedWrappings,
  finishKeyRotation,
  firstRotationAfter,
  insertKeyRotation,
  insertRetiredDataKey,
  lastDataKeyVersion,
  latestRotation,
  listRetiredDataKeys,
  listTenantKeys,
  listUnfinishedRotations,
  promoteStagedWrappings,
  type KeyRotationRecord
} from '../storage/repositories/vault.repository'
import { toIsoString } from '../domain/dates'
import { ConflictError, NotFoundError } from '../domain/errors'
import { TEAM_CACHE_TTL_MS, type ServiceContext } from './service-context'
import type { Keyring } from './keyring'
import { audit, type AuditEvent, type AuditOperation } from './audit'
import { outboxContext } from './mail.service'
import { sealedSettingAssociatedData } from './sealed-settings.service'
import { idempotentResponseAssociatedData, tokenAssociatedData, tokenIntentAssociatedData } from './token-crypto'
import { notifyChange } from '../storage/change-feed'

/** Who performs a ceremony: a person acting as this user id; `via` says how, for the audit message. */
export interface CeremonyActor {
  userId: string
  via: string
}

/** Where a fault-injection test stops a master rotation, as a crash would. */
export type MasterRotationStep = 'staged' | 'stored'

const KIND_LABELS: Record<SealedObjectKind, [one: string, many: string]> = {
  tokens: ['token', 'tokens'],
  outbox_mails: ['outbox mail', 'outbox mails'],
  sealed_settings: ['sealed setting', 'sealed settings'],
  token_intents: ['token intent', 'token intents'],
  idempotent_responses: ['stored idempotent response', 'stored idempotent responses']
}

/** "3 tokens, 1 outbox mail" (kinds with none are left out; "nothing" when all are). */
export function describeCounts(counts: Partial<Record<SealedObjectKind, number>>): string {
  const parts = SEALED_KINDS.filter((kind) => (counts[kind] ?? 0) > 0).map((kind) => {
    const count = counts[kind]!
    return `${count} ${KIND_LABELS[kind][count === 1 ? 0 : 1]}`
  })
  return parts.length ? parts.join(', ') : 'nothing'
}

function associatedData(kind: SealedObjectKind, tenantId: string, id: string): string {
  if (kind === 'tokens') return tokenAssociatedData(tenantId, id)
  if (kind === 'outbox_mails') return outboxContext(id)
  if (kind === 'token_intents') return tokenIntentAssociatedData(tenantId, id)
  if (kind === 'idempotent_responses') return idempotentResponseAssociatedData(tenantId, id)
  return sealedSettingAssociatedData(tenantId, id)
}

/** Objects on any version but `version`, summed over kinds. */
function countOff(counts: SealedCountsByVersion, version: number): number {
  let total = 0
  for (const kind of SEALED_KINDS) for (const [v, n] of Object.entries(counts[kind])) if (Number(v) !== version) total += n
  return total
}

/** The counts with `version` listed under every kind, at 0 where nothing is on it: the proof names it explicitly. */
function withVersion(counts: SealedCountsByVersion, version: number): SealedCountsByVersion {
  for (const kind of SEALED_KINDS) counts[kind] = { [version]: 0, ...counts[kind] }
  return counts
}

const dataKeyEntity = (version: number) => `data-key-v${version}`

/** How long after a rotation a team vault's instances may still seal under the version it moved off: the cache backstop, and writes queued meanwhile. */
const RETIRE_SETTLE_MS = 3 * TEAM_CACHE_TTL_MS

/** The audit entry of a key ceremony, naming the person and how they acted; `actor` null for the system (the background pass). */
function keyEvent(actor: CeremonyActor | null, tenantId: string, entityId: string, operation: AuditOperation, message: string): AuditEvent {
  const person = actor && { id: actor.userId, type: 'user' as const, tenantId }
  return { actor: person, tenantId, entityType: 'key', entityId, operation, message: actor ? `${message} (${actor.via})` : message }
}
const MASTER_KEY_ENTITY = 'master-key'

/**
 * Finishes or undoes a master rotation that stopped between its commits, as
 * the key that opened the vault tells: the new key (its storage was updated)
 * promotes the staged wrappings, the old one drops them. Audited as the system.
 */
export async function settleMasterRotation(writes: WriteQueue, keyring: Keyring, now: number): Promise<void> {
  const staged = keyring.stagedMasterRotation
  if (!staged) return
  const message =
    staged === 'promote'
      ? 'Master key rotation completed: the vault was opened with the new master key'
      : 'Master key rotation abandoned: the new master key was never stored; the vault stays under its master key'
  await writes.run(async (trx) => {
    await (staged === 'promote' ? promoteStagedWrappings(trx) : discardStagedWrappings(trx))
    await notifyChange(trx, { kind: 'keys' })
    audit(trx, now, keyring.tenantIds().map((tenantId) => keyEvent(null, tenantId, MASTER_KEY_ENTITY, 'rotate', message)))
  })
  keyring.stagedMasterRotation = undefined
}

/** Objects per kind and data-key version of a tenant. */
async function sealedCounts(db: Db, tenantId: string): Promise<SealedCountsByVersion> {
  const counts = {} as SealedCountsByVersion
  for (const kind of SEALED_KINDS) counts[kind] = Object.fromEntries(await countSealedByVersion(db, kind, tenantId))
  return counts
}

function rotationSummary(rotation: KeyRotationRecord): { target_version: number; started_at: string; finished_at?: string } {
  return {
    target_version: rotation.target_version,
    started_at: toIsoString(Number(rotation.started_at)),
    ...(rotation.finished_at !== null ? { finished_at: toIsoString(Number(rotation.finished_at)) } : {})
  }
}

function rotationProgress(rotation: KeyRotationRecord, counts: SealedCountsByVersion) {
  const target = rotation.target_version
  const remaining = rotation.finished_at === null ? countOff(counts, target) : 0
  return { ...rotationSummary(rotation), total: countOff(rotation.counts_before, target), remaining }
}

/**
 * Every tenant's data-key versions, what each seals, and the latest rotation's
 * progress. Reads only: `tessera keys status` runs it beside a running server.
 */
export async function readKeyStatus(db: Db, keyring: Keyring): Promise<KeyStatus> {
  const rows = await listTenantKeys(db)
  const tenants: TenantKeyStatus[] = []
  for (const tenantId of keyring.tenantIds().sort()) {
    const counts = await sealedCounts(db, tenantId)
    const objects = (version: number) => Object.fromEntries(SEALED_KINDS.map((kind) => [kind, counts[kind][version] ?? 0])) as TenantKeyStatus['versions'][number]['objects']
    const current = keyring.currentDataKey(tenantId).version
    const active = rows
      .filter((row) => row.tenant_id === tenantId && row.purpose === 'data')
      .map((row) => ({
        version: row.version,
        current: row.version === current,
        key_check_value: keyCheckValue(keyring.dataKey(tenantId, row.version)),
        created_at: toIsoString(Number(row.created_at)),
        objects: objects(row.version)
      }))
    const retired = (await listRetiredDataKeys(db, tenantId)).map((row) => ({
      version: row.version,
      current: false,
      key_check_value: row.key_check_value,
      created_at: toIsoString(Number(row.created_at)),
      retired_at: toIsoString(Number(row.retired_at)),
      objects: objects(row.version)
    }))
    const status: TenantKeyStatus = { tenant_id: tenantId, current_version: current, versions: [...active, ...retired].sort((a, b) => a.version - b.version) }
    const rotation = await latestRotation(db, tenantId)
    if (rotation) status.rotation = rotationProgress(rotation, counts)
    tenants.push(status)
  }
  return { tenants }
}

export class KeysService {
  /** Ceremonies run one at a time: a master rotation must not interleave with a new data key. */
  private turn: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly context: ServiceContext,
    /** Cached token rows may name a retired version: they are dropped when one is retired. */
    private readonly tokens: { clearCache(): void }
  ) {}

  /** Every tenant's data-key versions, what each seals, and the latest rotation's progress. */
  status(): Promise<KeyStatus> {
    return readKeyStatus(this.context.reader, this.context.keyring)
  }

  /**
   * Creates a tenant's next data-key version and makes it current: new writes
   * use it at once, and the `reencrypt-keys` sweep moves everything else onto it.
   * A 409 while the tenant's previous rotation has not finished.
   */
  rotate(actor: CeremonyActor, tenantId: string): Promise<TenantKeyStatus> {
    return this.exclusive(async () => {
      const now = this.context.clock.now()
      const { version, key } = await this.context.writes.run(async (trx) => {
        const unfinished = (await listUnfinishedRotations(trx)).find((rotation) => rotation.tenant_id === tenantId)
        if (unfinished) {
          throw new ConflictError(`The rotation to data key version ${unfinished.target_version} is still re-encrypting; it resumes on its own. Rotate again once it has finished.`)
        }
        const version = (await lastDataKeyVersion(trx, tenantId)) + 1
        const key = await this.context.keyring.createDataKey(trx, tenantId, version, now)
        const counts = await sealedCounts(trx, tenantId)
        await insertKeyRotation(trx, { tenant_id: tenantId, target_version: version, counts_before: counts, started_at: now })
        const message = `Data key version ${version} created; re-encryption of ${describeCounts(this.totals(counts))} onto it started`
        audit(trx, now, [keyEvent(actor, tenantId, dataKeyEntity(version), 'rotate', message)])
        await notifyChange(trx, { kind: 'keys' })
        return { version, key }
      })
      this.context.keyring.installDataKey(tenantId, version, key)
      return (await this.status()).tenants.find((tenant) => tenant.tenant_id === tenantId)!
    })
  }

  /**
   * Re-encrypts up to `limit` objects of the oldest unfinished rotation onto its
   * version, in one transaction, and finishes the rotation (audited) once none
   * remain. Returns how many objects moved. The `reencrypt-keys` sweep.
   */
  async reencrypt(limit: number): Promise<number> {
    const [rotation] = await listUnfinishedRotations(this.context.reader)
    if (!rotation) return 0
    return this.context.writes.run((trx) => this.reencryptBatch(trx, rotation, limit), limit)
  }

  /**
   * Retires a data-key version: only when no token, token intent, outbox mail,
   * sealed setting or stored idempotent response uses it (a 409 naming what still does), checked in the transaction
   * that deletes the key. Returns the report, which is also kept in the vault.
   */
  retire(actor: CeremonyActor, tenantId: string, version: number): Promise<KeyRetirementReport> {
    return this.exclusive(async () => {
      await this.untilEveryInstanceMovedOn(tenantId, version)
      const now = this.context.clock.now()
      const report = await this.context.writes.run(async (trx) => {
        if ((await listRetiredDataKeys(trx, tenantId)).some((row) => row.version === version)) {
          throw new ConflictError(`Data key version ${version} is already retired.`)
        }
        const key = this.activeVersion(tenantId, version)
        const counts = await sealedCounts(trx, tenantId)
        const uses = Object.fromEntries(SEALED_KINDS.map((kind) => [kind, counts[kind][version] ?? 0]))
        if (Object.values(uses).some((count) => count > 0)) {
          throw new ConflictError(`Data key version ${version} still seals ${describeCounts(uses)}; wait until the re-encryption has moved them (see the key status), then retire it.`)
        }
        const created = (await listTenantKeys(trx)).find((row) => row.tenant_id === tenantId && row.purpose === 'data' && row.version === version)!
        const rotation = await firstRotationAfter(trx, tenantId, version)
        const current = this.context.keyring.currentDataKey(tenantId)
        await deleteDataKey(trx, tenantId, version)
        const report: KeyRetirementReport = {
          report: 'tessera-data-key-retirement',
          tenant_id: tenantId,
          retired_version: version,
          retired_key_check_value: keyCheckValue(key),
          retired_key_created_at: toIsoString(Number(created.created_at)),
          current_version: current.version,
          current_key_check_value: keyCheckValue(current.key),
          ...(rotation ? { rotation: rotationSummary(rotation), counts_before: rotation.counts_before } : {}),
          counts_after: withVersion(await sealedCounts(trx, tenantId), version),
          retired_at: toIsoString(now),
          retired_by: `user ${actor.userId} (${actor.via})`
        }
        await insertRetiredDataKey(trx, {
          tenant_id: tenantId,
          version,
          key_check_value: report.retired_key_check_value,
          created_at: Number(created.created_at),
          retired_at: now,
          report
        })
        const message = `Data key version ${version} retired: no token, token intent, outbox mail or sealed setting used it; the key was deleted`
        audit(trx, now, [keyEvent(actor, tenantId, dataKeyEntity(version), 'retire', message)])
        await notifyChange(trx, { kind: 'keys' })
        return report
      })
      this.tokens.clearCache()
      this.context.keyring.forgetDataKey(tenantId, version)
      return report
    })
  }

  /**
   * On a team vault, waits until RETIRE_SETTLE_MS have passed since the rotation that moved off
   * `version`: another instance seals under it until it hears of that rotation (at once, or within
   * TEAM_CACHE_TTL_MS when the notice is lost), and a write it sealed then may still be queued. Such a
   * write committing after the retirement would hold data no key opens; once settled, it shows in the
   * count that refuses the retirement instead. A file vault has one process, whose keyring moved on at once.
   */
  private async untilEveryInstanceMovedOn(tenantId: string, version: number): Promise<void> {
    if (this.context.cacheTtlMs === undefined) return
    const rotation = await firstRotationAfter(this.context.reader, tenantId, version)
    const wait = rotation ? rotation.started_at + RETIRE_SETTLE_MS - this.context.clock.now() : 0
    if (wait > 0) await sleep(Math.min(wait, RETIRE_SETTLE_MS))
  }

  /** The report kept when a version was retired. */
  async report(tenantId: string, version: number): Promise<KeyRetirementReport> {
    const row = (await listRetiredDataKeys(this.context.reader, tenantId)).find((retired) => retired.version === version)
    if (!row) throw new NotFoundError(`Retirement report of data key version ${version}`)
    return row.report
  }

  /**
   * Re-wraps every key under `next`, in an order that survives a crash at any
   * moment: (1) commit every key wrapped under `next` beside its current
   * wrapping, (2) `store` the new master key (its storage replaces the old key
   * atomically), (3) commit the new wrappings as the only ones. Opening the
   * vault accepts either wrapping, so whichever key the storage holds after a
   * crash opens it, and finishes or undoes the rotation (openVault).
   * `afterStep` lets fault-injection tests stop the rotation there, as a crash would.
   */
  rotateMaster(
    actor: CeremonyActor,
    next: MasterKey,
    store: (key: MasterKey) => Promise<void>,
    afterStep: (step: MasterRotationStep) => Promise<void> = async () => undefined
  ): Promise<MasterKeyRotated> {
    return this.exclusive(async () => {
      await this.context.writes.run((trx) => this.context.keyring.stageMaster(trx, next))
      await afterStep('staged')
      try {
        await store(next)
      } catch (error) {
        await this.context.writes.run((trx) => discardStagedWrappings(trx))
        throw error
      }
      await afterStep('stored')
      const now = this.context.clock.now()
      await this.context.writes.run(async (trx) => {
        await promoteStagedWrappings(trx)
        await notifyChange(trx, { kind: 'keys' })
        const message = 'Master key rotated: every key is now wrapped under the new master key'
        audit(trx, now, this.context.keyring.tenantIds().map((tenantId) => keyEvent(actor, tenantId, MASTER_KEY_ENTITY, 'rotate', message)))
      })
      this.context.keyring.useMaster(next)
      return { rotated_at: toIsoString(now), key_check_value: keyCheckValue(next) }
    })
  }

  private async reencryptBatch(trx: Tx, rotation: KeyRotationRecord, limit: number): Promise<number> {
    const { tenant_id: tenantId } = rotation
    const target = rotation.target_version
    const key = this.context.keyring.dataKey(tenantId, target)
    let moved = 0
    for (const kind of SEALED_KINDS) {
      if (moved >= limit) break
      for (const object of await listSealedOffVersion(trx, kind, tenantId, target, limit - moved)) {
        const context = associatedData(kind, tenantId, object.id)
        const plaintext = open(this.context.keyring.dataKey(tenantId, Number(object.key_version)), object.sealed, context)
        moved += await resealObject(trx, kind, tenantId, object, seal(key, plaintext, context), target)
      }
    }
    if (moved < limit && countOff(await sealedCounts(trx, tenantId), target) === 0) {
      const now = this.context.clock.now()
      await finishKeyRotation(trx, rotation.id, now)
      const total = this.totals(rotation.counts_before, target)
      const message = `Re-encryption onto data key version ${target} finished (${describeCounts(total)} re-encrypted)`
      audit(trx, now, [keyEvent(null, tenantId, dataKeyEntity(target), 'update', message)])
    }
    return moved
  }

  /** Per kind, `version → objects` of a tenant. */
  /** Objects per kind, over every version except `exceptVersion`. */
  private totals(counts: SealedCountsByVersion, exceptVersion?: number): Record<SealedObjectKind, number> {
    const totals = {} as Record<SealedObjectKind, number>
    for (const kind of SEALED_KINDS) {
      totals[kind] = Object.entries(counts[kind] ?? {}).reduce((sum, [version, n]) => (Number(version) === exceptVersion ? sum : sum + n), 0)
    }
    return totals
  }

  /** The key of a version that can be retired: held, and not the current one. */
  private activeVersion(tenantId: string, version: number): Uint8Array {
    if (!this.context.keyring.dataKeyVersions(tenantId).includes(version)) throw new NotFoundError(`Data key version ${version}`)
    if (this.context.keyring.currentDataKey(tenantId).version === version) {
      throw new ConflictError(`Data key version ${version} is the current one; rotate first (a new version), then retire this one once nothing uses it.`)
    }
    return this.context.keyring.dataKey(tenantId, version)
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work)
    this.turn = run.catch(() => undefined)
    return run
  }
}
