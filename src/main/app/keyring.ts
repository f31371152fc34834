/**
 * The unwrapped keys of an open vault, held in memory only. Built once at
 * start-up by `unlockKeyring`, which is also where a wrong master key is caught.
 *
 * Data keys have versions: rotation adds one and makes it current, retirement
 * forgets one. A master-key rotation stages every key wrapped under the new
 * master beside the current wrapping, stores the new master, then promotes the
 * staged wrappings; `unlockKeyring` accepts either wrapping, so the vault opens
 * with whichever master key survived a crash between those steps.
 */
import type { Db, Reader, Tx } from '../storage/connections'
import type { AuditMacKey, AuditSigningSeed } from '../crypto/audit'
import { DecryptionError } from '../crypto/aead'
import { unwrapKey, wrapKey } from '../crypto/keys'
import { CannotUnlockError, ConflictError, VaultLockedError } from '../domain/errors'
import { randomBytes } from '../crypto/random'
import { KEY_BYTES, type DataKey, type FingerprintKey, type MasterKey, type SecretHashKey } from '../crypto/types'
import { findVault, insertTenantKey, insertVault, listTenantKeys, stageWrappings, updateAuditKeys, type TenantKeyRow, type VaultRow } from '../storage/repositories/vault.repository'

/** The vault's audit keys: the chain's MAC key and the seed of the key that signs exports. */
export interface AuditKeys {
  mac: AuditMacKey
  signingSeed: AuditSigningSeed
}

interface TenantKeys {
  dataKeys: Map<number, DataKey>
  currentVersion: number
  fingerprintKey: FingerprintKey
}

/** What opening found of an unfinished master rotation: staged wrappings to promote (opened with the new key) or to discard. */
export type StagedMasterRotation = 'promote' | 'discard'

/** Why an instance of a team vault cannot use keys another instance made under a master key it does not have. */
const OUTDATED_MASTER =
  "This server's master key is out of date: the vault's master key was rotated by another server or command. Give this server the new master key (TESSERA_MASTER_KEY or master.key) and restart it."

export class Keyring {
  private tenants = new Map<string, TenantKeys>()
  /** Tenants with a data-key version this process cannot unwrap (wrapped under a newer master key). */
  private unreadable = new Set<string>()
  /** Counts this process's own key changes, so a reload that read the keys before one does not undo it. */
  private changes = 0
  /** Set by `unlockKeyring` when a master rotation stopped between its commits. */
  stagedMasterRotation: StagedMasterRotation | undefined
  private audit: AuditKeys | undefined

  constructor(
    private master: MasterKey,
    readonly secretHashKey: SecretHashKey
  ) {}

  /** The key that seals new data for a tenant, with its version. */
  currentDataKey(tenantId: string): { version: number; key: DataKey } {
    // Sealing under an older version than the current one would race its retirement: fail closed.
    if (this.unreadable.has(tenantId)) throw new VaultLockedError(OUTDATED_MASTER)
    const keys = this.tenantKeys(tenantId)
    return { version: keys.currentVersion, key: keys.dataKeys.get(keys.currentVersion)! }
  }

  /** The key of a given version, for opening older rows. */
  dataKey(tenantId: string, version: number): DataKey {
    const key = this.tenantKeys(tenantId).dataKeys.get(version)
    if (!key && this.unreadable.has(tenantId)) throw new VaultLockedError(OUTDATED_MASTER)
    if (!key) throw new Error(`No data key version ${version} for tenant`)
    return key
  }

  fingerprintKey(tenantId: string): FingerprintKey {
    return this.tenantKeys(tenantId).fingerprintKey
  }

  /** Every tenant with keys. */
  tenantIds(): string[] {
    return [...this.tenants.keys()]
  }

  /** The data-key versions held for a tenant, oldest first. */
  dataKeyVersions(tenantId: string): number[] {
    return [...this.tenantKeys(tenantId).dataKeys.keys()].sort((a, b) => a - b)
  }

  /** Creates and stores the first data key and the fingerprint key of a new tenant. */
  async createTenantKeys(db: Db, tenantId: string, now: number): Promise<void> {
    const dataKey = randomBytes(KEY_BYTES) as DataKey
    const fingerprintKey = randomBytes(KEY_BYTES) as FingerprintKey
    for (const [purpose, key] of [['data', dataKey], ['fingerprint', fingerprintKey]] as const) {
      const wrapped = wrapKey(this.master, key, tenantKeyLabel(tenantId, purpose, 1))
      await insertTenantKey(db, { tenant_id: tenantId, purpose, version: 1, wrapped_key: Buffer.from(wrapped) }, now)
    }
    this.tenants.set(tenantId, { dataKeys: new Map([[1, dataKey]]), currentVersion: 1, fingerprintKey })
  }

  /**
   * Stores a new data-key version of a tenant in the caller's transaction.
   * It seals nothing until `installDataKey`, called once that transaction committed.
   */
  async createDataKey(db: Tx, tenantId: string, version: number, now: number): Promise<DataKey> {
    await this.requireCurrentMaster(db)
    const key = randomBytes(KEY_BYTES) as DataKey
    const wrapped = wrapKey(this.master, key, tenantKeyLabel(tenantId, 'data', version))
    await insertTenantKey(db, { tenant_id: tenantId, purpose: 'data', version, wrapped_key: Buffer.from(wrapped) }, now)
    return key
  }

  /** Makes a stored data-key version the one new writes use. */
  installDataKey(tenantId: string, version: number, key: DataKey): void {
    const keys = this.tenantKeys(tenantId)
    keys.dataKeys.set(version, key)
    keys.currentVersion = version
    this.changes++
  }

  /** Drops a retired data-key version from memory. */
  forgetDataKey(tenantId: string, version: number): void {
    this.tenantKeys(tenantId).dataKeys.delete(version)
    this.changes++
  }

  /** Wraps every stored key under `next` beside its current wrapping, in the caller's transaction. */
  async stageMaster(db: Tx, next: MasterKey): Promise<void> {
    await this.requireCurrentMaster(db)
    const rows = await listTenantKeys(db)
    const staged = rows.map((row) => {
      const label = tenantKeyLabel(row.tenant_id, row.purpose, row.version)
      return { ...row, wrapped: wrapKey(next, unwrap(this.master, row.wrapped_key, label), label) }
    })
    const audit = this.audit && {
      wrapped_audit_mac_key: wrapKey(next, this.audit.mac, AUDIT_MAC_LABEL),
      wrapped_audit_signing_key: wrapKey(next, this.audit.signingSeed, AUDIT_SIGNING_LABEL)
    }
    await stageWrappings(db, { secretHashKey: wrapKey(next, this.secretHashKey, SECRET_HASH_LABEL), audit }, staged)
  }

  /** Wraps later keys under `master` (after its wrappings were promoted). */
  useMaster(master: MasterKey): void {
    this.master = master
  }

  /** Loads and unwraps every tenant key, current or staged wrapping (throws CannotUnlockError on a wrong master key). */
  async load(db: Reader): Promise<void> {
    const rows = await listTenantKeys(db)
    for (const row of rows) {
      const { key, staged } = unwrapEither(this.master, tenantKeyLabel(row.tenant_id, row.purpose, row.version), row.wrapped_key, row.wrapped_key_next)
      if (staged) this.stagedMasterRotation = 'promote'
      else if (row.wrapped_key_next) this.stagedMasterRotation ??= 'discard'
      const entry = this.tenants.get(row.tenant_id) ?? {
        dataKeys: new Map(),
        currentVersion: 0,
        fingerprintKey: undefined as unknown as FingerprintKey
      }
      if (row.purpose === 'fingerprint') entry.fingerprintKey = key as FingerprintKey
      else {
        entry.dataKeys.set(row.version, key as DataKey)
        entry.currentVersion = Math.max(entry.currentVersion, row.version)
      }
      this.tenants.set(row.tenant_id, entry)
    }
  }

  /**
   * Brings the held tenant keys in line with the database after another
   * process changed them (a team vault's other instances, `tessera keys`):
   * new versions are unwrapped, retired ones forgotten, the newest is current.
   * A version wrapped under a master key this process lacks makes its tenant
   * refuse to seal (503) rather than seal under an older version.
   */
  async reload(db: Reader): Promise<void> {
    let changes: number
    let rows: TenantKeyRow[]
    do {
      changes = this.changes
      rows = await listTenantKeys(db)
    } while (changes !== this.changes)
    const tenants = new Map<string, TenantKeys>()
    const unreadable = new Set<string>()
    for (const row of rows) {
      const key = this.heldKey(row.tenant_id, row.purpose, row.version) ?? this.unwrapNew(row)
      if (!key) {
        unreadable.add(row.tenant_id)
        continue
      }
      const entry = tenants.get(row.tenant_id) ?? { dataKeys: new Map(), currentVersion: 0, fingerprintKey: undefined as unknown as FingerprintKey }
      if (row.purpose === 'fingerprint') entry.fingerprintKey = key as FingerprintKey
      else {
        entry.dataKeys.set(row.version, key as DataKey)
        entry.currentVersion = Math.max(entry.currentVersion, row.version)
      }
      tenants.set(row.tenant_id, entry)
    }
    this.tenants = tenants
    this.unreadable = unreadable
  }

  private heldKey(tenantId: string, purpose: string, version: number): Uint8Array | undefined {
    const keys = this.tenants.get(tenantId)
    if (!keys) return undefined
    return purpose === 'fingerprint' ? keys.fingerprintKey : keys.dataKeys.get(version)
  }

  /** A key this process does not hold yet; undefined when the master key cannot unwrap it. */
  private unwrapNew(row: TenantKeyRow): Uint8Array | undefined {
    try {
      return unwrapEither(this.master, tenantKeyLabel(row.tenant_id, row.purpose, row.version), row.wrapped_key, row.wrapped_key_next).key
    } catch (error) {
      if (error instanceof CannotUnlockError) return undefined
      throw error
    }
  }

  /**
   * A key wrapped under a master key that is no longer the vault's could never
   * be opened again: refused (409) when another process rotated the master key.
   */
  private async requireCurrentMaster(db: Tx): Promise<void> {
    const vault = await findVault(db)
    try {
      if (vault) unwrap(this.master, vault.wrapped_secret_hash_key, SECRET_HASH_LABEL)
    } catch (error) {
      if (error instanceof CannotUnlockError) throw new ConflictError(OUTDATED_MASTER)
      throw error
    }
  }

  /** Whether the vault has its audit keys (a vault made before the audit chain gets them when first opened). */
  get hasAuditKeys(): boolean {
    return this.audit !== undefined
  }

  get auditKeys(): AuditKeys {
    if (!this.audit) throw new Error('The vault has no audit keys yet')
    return this.audit
  }

  /** Creates and stores the audit keys of a vault that has none. */
  async createAuditKeys(db: Db): Promise<void> {
    const keys = { mac: randomBytes(KEY_BYTES) as AuditMacKey, signingSeed: randomBytes(KEY_BYTES) as AuditSigningSeed }
    await updateAuditKeys(db, {
      wrapped_audit_mac_key: wrapKey(this.master, keys.mac, AUDIT_MAC_LABEL),
      wrapped_audit_signing_key: wrapKey(this.master, keys.signingSeed, AUDIT_SIGNING_LABEL)
    })
    this.audit = keys
  }

  /** Unwraps the audit keys stored in the vault row, if it has them (current or staged wrapping). */
  loadAuditKeys(vault: VaultRow): void {
    if (!vault.wrapped_audit_mac_key || !vault.wrapped_audit_signing_key) return
    this.audit = {
      mac: unwrapEither(this.master, AUDIT_MAC_LABEL, vault.wrapped_audit_mac_key, vault.wrapped_audit_mac_key_next).key as AuditMacKey,
      signingSeed: unwrapEither(this.master, AUDIT_SIGNING_LABEL, vault.wrapped_audit_signing_key, vault.wrapped_audit_signing_key_next).key as AuditSigningSeed
    }
  }

  private tenantKeys(tenantId: string): TenantKeys {
    const keys = this.tenants.get(tenantId)
    if (!keys) throw new Error('Unknown tenant')
    return keys
  }
}

function tenantKeyLabel(tenantId: string, purpose: string, version: number): string {
  return `tenant:${tenantId}:${purpose}:${version}`
}

/** Unwraps a key; a wrong master key (or label) is a CannotUnlockError. */
function unwrap(master: MasterKey, wrapped: Uint8Array, label: string): Uint8Array {
  try {
    return unwrapKey(master, wrapped, label)
  } catch (error) {
    if (!(error instanceof DecryptionError)) throw error
    throw new CannotUnlockError('the master key does not match this vault.', 'use the key this vault was created with: TESSERA_MASTER_KEY, else master.key in the data directory.')
  }
}

/** Unwraps with the current wrapping, else the staged one of an unfinished master rotation. */
function unwrapEither(master: MasterKey, label: string, wrapped: Uint8Array, staged: Uint8Array | null | undefined): { key: Uint8Array; staged: boolean } {
  try {
    return { key: unwrap(master, wrapped, label), staged: false }
  } catch (error) {
    if (!staged || !(error instanceof CannotUnlockError)) throw error
    return { key: unwrap(master, staged, label), staged: true }
  }
}

const SECRET_HASH_LABEL = 'vault:secret-hash'
const AUDIT_MAC_LABEL = 'vault:audit-mac'
const AUDIT_SIGNING_LABEL = 'vault:audit-signing'

/** Creates the vault's own keys in a new, empty database. */
export async function createKeyring(db: Db, master: MasterKey, now: number): Promise<Keyring> {
  const secretHashKey = randomBytes(KEY_BYTES) as SecretHashKey
  await insertVault(db, wrapKey(master, secretHashKey, SECRET_HASH_LABEL), now)
  const keyring = new Keyring(master, secretHashKey)
  await keyring.createAuditKeys(db)
  return keyring
}

/** Opens an existing vault's keys; a wrong master key fails here, before any data is touched. */
export async function unlockKeyring(db: Reader, master: MasterKey): Promise<Keyring> {
  const vault = await findVault(db)
  if (!vault) throw new CannotUnlockError('this data directory holds no initialised vault.', 'create it with `tessera init` (an interrupted init can simply be run again).')
  const { key, staged } = unwrapEither(master, SECRET_HASH_LABEL, vault.wrapped_secret_hash_key, vault.wrapped_secret_hash_key_next)
  const keyring = new Keyring(master, key as SecretHashKey)
  if (staged) keyring.stagedMasterRotation = 'promote'
  else if (vault.wrapped_secret_hash_key_next) keyring.stagedMasterRotation = 'discard'
  keyring.loadAuditKeys(vault)
  await keyring.load(db)
  return keyring
}
