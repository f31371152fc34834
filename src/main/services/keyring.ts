/**
 * The unwrapped keys of an open vault, held in memory only. Built once at
 * start-up by `unlockKeyring`, which is also where a wrong master key is caught.
 */
import type { Knex } from 'knex'
import type { AuditMacKey, AuditSigningSeed } from '../crypto/audit'
import { CannotUnlockError, unwrapKey, wrapKey } from '../crypto/keys'
import { randomBytes } from '../crypto/random'
import { KEY_BYTES, type DataKey, type FingerprintKey, type MasterKey, type SecretHashKey } from '../crypto/types'
import { findVault, insertTenantKey, insertVault, listTenantKeys, updateAuditKeys, type VaultRow } from '../repositories/vault.repository'

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

export class Keyring {
  private readonly tenants = new Map<string, TenantKeys>()
  private audit: AuditKeys | undefined

  constructor(
    private readonly master: MasterKey,
    readonly secretHashKey: SecretHashKey
  ) {}

  /** The key that seals new data for a tenant, with its version. */
  currentDataKey(tenantId: string): { version: number; key: DataKey } {
    const keys = this.tenantKeys(tenantId)
    return { version: keys.currentVersion, key: keys.dataKeys.get(keys.currentVersion)! }
  }

  /** The key of a given version, for opening older rows. */
  dataKey(tenantId: string, version: number): DataKey {
    const key = this.tenantKeys(tenantId).dataKeys.get(version)
    if (!key) throw new Error(`No data key version ${version} for tenant`)
    return key
  }

  fingerprintKey(tenantId: string): FingerprintKey {
    return this.tenantKeys(tenantId).fingerprintKey
  }

  /** Creates and stores the first data key and the fingerprint key of a new tenant. */
  async createTenantKeys(db: Knex | Knex.Transaction, tenantId: string, now: number): Promise<void> {
    const dataKey = randomBytes(KEY_BYTES) as DataKey
    const fingerprintKey = randomBytes(KEY_BYTES) as FingerprintKey
    for (const [purpose, key] of [['data', dataKey], ['fingerprint', fingerprintKey]] as const) {
      const wrapped = wrapKey(this.master, key, tenantKeyLabel(tenantId, purpose, 1))
      await insertTenantKey(db, { tenant_id: tenantId, purpose, version: 1, wrapped_key: Buffer.from(wrapped) }, now)
    }
    this.tenants.set(tenantId, { dataKeys: new Map([[1, dataKey]]), currentVersion: 1, fingerprintKey })
  }

  /** Loads and unwraps every tenant key (throws CannotUnlockError on a wrong master key). */
  async load(db: Knex): Promise<void> {
    const rows = await listTenantKeys(db)
    for (const row of rows) {
      const key = unwrapKey(this.master, row.wrapped_key, tenantKeyLabel(row.tenant_id, row.purpose, row.version))
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

  /** Whether the vault has its audit keys (a vault made before the audit chain gets them when first opened). */
  get hasAuditKeys(): boolean {
    return this.audit !== undefined
  }

  get auditKeys(): AuditKeys {
    if (!this.audit) throw new Error('The vault has no audit keys yet')
    return this.audit
  }

  /** Creates and stores the audit keys of a vault that has none. */
  async createAuditKeys(db: Knex | Knex.Transaction): Promise<void> {
    const keys = { mac: randomBytes(KEY_BYTES) as AuditMacKey, signingSeed: randomBytes(KEY_BYTES) as AuditSigningSeed }
    await updateAuditKeys(db, {
      wrapped_audit_mac_key: wrapKey(this.master, keys.mac, AUDIT_MAC_LABEL),
      wrapped_audit_signing_key: wrapKey(this.master, keys.signingSeed, AUDIT_SIGNING_LABEL)
    })
    this.audit = keys
  }

  /** Unwraps the audit keys stored in the vault row, if it has them. */
  loadAuditKeys(vault: VaultRow): void {
    if (!vault.wrapped_audit_mac_key || !vault.wrapped_audit_signing_key) return
    this.audit = {
      mac: unwrapKey(this.master, vault.wrapped_audit_mac_key, AUDIT_MAC_LABEL) as AuditMacKey,
      signingSeed: unwrapKey(this.master, vault.wrapped_audit_signing_key, AUDIT_SIGNING_LABEL) as AuditSigningSeed
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

const SECRET_HASH_LABEL = 'vault:secret-hash'
const AUDIT_MAC_LABEL = 'vault:audit-mac'
const AUDIT_SIGNING_LABEL = 'vault:audit-signing'

/** Creates the vault's own keys in a new, empty database. */
export async function createKeyring(db: Knex | Knex.Transaction, master: MasterKey, now: number): Promise<Keyring> {
  const secretHashKey = randomBytes(KEY_BYTES) as SecretHashKey
  await insertVault(db, wrapKey(master, secretHashKey, SECRET_HASH_LABEL), now)
  const keyring = new Keyring(master, secretHashKey)
  await keyring.createAuditKeys(db)
  return keyring
}

/** Opens an existing vault's keys; a wrong master key fails here, before any data is touched. */
export async function unlockKeyring(db: Knex, master: MasterKey): Promise<Keyring> {
  const vault = await findVault(db)
  if (!vault) throw new CannotUnlockError('this data directory holds no initialised vault.', 'create it with `tessera init` (an interrupted init can simply be run again).')
  const secretHashKey = unwrapKey(master, vault.wrapped_secret_hash_key, SECRET_HASH_LABEL) as SecretHashKey
  const keyring = new Keyring(master, secretHashKey)
  keyring.loadAuditKeys(vault)
  await keyring.load(db)
  return keyring
}
