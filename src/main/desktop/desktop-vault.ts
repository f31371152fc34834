/**
 * The desktop app's hold on the vault: create it on first run, unlock it with
 * the stored master key, serve REST on loopback while it is open (so local
 * applications can call the service while the GUI runs), lock it again.
 * Electron-free: the IPC handlers, the browser tests and the Electron glue
 * all drive this one object.
 */
import { mkdir } from 'node:fs/promises'
import type { AuditArchive, CreateVaultRequest, DesktopSettings, KeyStorage, VaultCreated, VaultStatus } from '../../shared/ipc'
import type { MasterKeyRotated } from '../../shared/types'
import { generateMasterKey, type MasterKey } from '../bootstrap/master-key'
import type { Logger } from '../infra/logger'
import { startServiceHost, type ServiceHost } from '../bootstrap/service-host'
import type { Actor } from '../app'
import type { Clock } from '../app/service-context'
import { BusinessRuleError, CannotUnlockError, ConflictError, ValidationError, VaultLockedError } from '../app'
import type { CeremonyActor } from '../app/keys.service'
import type { AuditInput } from '../app/audit'
import { SMTP_PASSWORD_SETTING } from '../app/sealed-settings.service'
import { initVault, vaultExists, type Vault } from '../bootstrap/vault'
import { VaultInUseError } from '../infra/vault-lock'
import { ENVIRONMENT_KEY_ROTATION, type MasterKeyStore } from './key-store'
import { IdleLock, type PowerEvent } from './idle-lock'
import type { SettingsSecrets, SettingsStore } from './settings'

/** The service only ever listens on loopback. */
export const SERVICE_HOST = '127.0.0.1'

export interface DesktopVaultOptions {
  dataDir: string
  keyStore: MasterKeyStore
  settings: SettingsStore
  logger: Logger
  /** The app's version, shown in Settings. */
  version: string
  clock?: Clock
  /** Runs after each lock (the Lock button, the idle lock, sleep, a locked screen): the app takes a copied secret off the clipboard. */
  onLock?: () => Promise<void>
}

function describeStartFailure(error: unknown, port: number): string {
  if (error instanceof CannotUnlockError || error instanceof VaultInUseError) return error.message
  // Tessera's own message naming both schemas (storage/database.ts): a vault file a newer version migrated.
  if ((error as { code?: unknown }).code === 'NEWER_SCHEMA') return `${(error as Error).message} Open it with that version of Tessera or a later one.`
  if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return `Port ${port} is already in use; choose another port.`
  if ((error as NodeJS.ErrnoException).code === 'EACCES') return `Port ${port} cannot be used; choose another port.`
  return 'The vault could not be opened.'
}

function vaultAction(operation: 'lock' | 'unlock', message: string): AuditInput {
  return { entityType: 'vault', entityId: 'desktop', operation, message }
}

function settingsAction(message: string): AuditInput {
  return { entityType: 'settings', entityId: 'desktop', operation: 'update', message }
}

export class DesktopVault {
  private host: ServiceHost | undefined
  private masterKey: MasterKey | undefined
  private initialised: boolean | undefined
  private keyStorage: KeyStorage | undefined
  private error: string | undefined
  /** Serialises create/unlock/lock/restart so two clicks cannot race. */
  private turn: Promise<unknown> = Promise.resolve()
  /** Settings changed while the vault was locked, logged when it is next unlocked. */
  private changedWhileLocked: string[] = []

  private readonly idleLock = new IdleLock({
    isUnlocked: () => this.host !== undefined,
    lock: (message) => this.lock(message),
    minutes: () => this.settings.idleLockMinutes,
    now: () => this.now()
  })

  constructor(private readonly options: DesktopVaultOptions) {}

  private now(): number {
    return this.options.clock ? this.options.clock.now() : Date.now()
  }

  /** The system's idle time (seconds), reported every second by the Electron glue: locks once it reaches the idle lock's minutes. */
  reportIdle(idleSeconds: number): Promise<void> {
    return this.idleLock.reportIdle(idleSeconds)
  }

  /** The window's user asked to stay unlocked: the idle time starts over. Returns the status with the new lock time. */
  reportActivity(): Promise<VaultStatus> {
    this.idleLock.reportActivity()
    return this.status()
  }

  /** The computer went to sleep or its screen locked: the vault locks at once. */
  reportPowerEvent(event: PowerEvent): Promise<void> {
    return this.idleLock.reportPowerEvent(event)
  }

  get settings(): SettingsStore {
    return this.options.settings
  }

  /** The open vault, or a 503 problem when locked. */
  requireVault(): Vault {
    if (!this.host) throw new VaultLockedError()
    return this.host.vault
  }

  /** Where settings secrets (the SMTP password) are sealed while the vault is open. */
  settingsSecrets(): SettingsSecrets | undefined {
    const vault = this.host?.vault
    return vault && { put: (name, value) => vault.services.sealedSettings.put(vault.tenantId, name, value) }
  }

  /**
   * The desktop user: the tenant OWNER, a member with every permission whose
   * token reads are masked; every GUI action is audited under this id.
   */
  actor(): Actor {
    return this.requireVault().owner
  }

  /**
   * Logs what the desktop user did, with the person (the OWNER user) as actor:
   * for GUI actions that change no vault row themselves, such as locking,
   * unlocking, settings and key ceremonies. Resolves once the entry is committed.
   */
  recordAction(input: AuditInput): Promise<void> {
    return this.requireVault().services.logs.record(this.actor(), input)
  }

  /**
   * The state once any create, unlock, lock or service restart under way has
   * finished: the window polls it, and a restart (new settings) is no lock.
   */
  async status(): Promise<VaultStatus> {
    await this.turn
    return this.currentStatus()
  }

  private async currentStatus(): Promise<VaultStatus> {
    this.initialised ??= await vaultExists({ dataDir: this.options.dataDir })
    this.keyStorage ??= await this.options.keyStore.locate()
    const vault = this.host?.vault
    return {
      state: vault ? 'unlocked' : this.initialised ? 'locked' : 'setup',
      dataDir: this.options.dataDir,
      ...(this.keyStorage ? { keyStorage: this.keyStorage } : {}),
      keychainAvailable: this.options.keyStore.keychainAvailable,
      service: this.host ? { running: true, url: this.host.url } : { running: false, ...(this.error ? { error: this.error } : {}) },
      ...(vault ? { tenantId: vault.tenantId, ownerUserId: vault.ownerUserId } : {}),
      ...(this.error ? { error: this.error } : {}),
      version: this.options.version,
      ...(vault ? { idleLock: this.idleLockStatus() } : {})
    }
  }

  private idleLockStatus(): NonNullable<VaultStatus['idleLock']> {
    const lockAt = this.idleLock.lockAt()
    return { minutes: this.settings.idleLockMinutes, ...(lockAt === undefined ? {} : { lockAt: new Date(lockAt).toISOString() }) }
  }

  /** First run: makes the master key, the vault and its management application, then unlocks. */
  create(request: CreateVaultRequest): Promise<VaultCreated> {
    return this.exclusive(async () => {
      const { dataDir, keyStore } = this.options
      if (await vaultExists({ dataDir })) throw new ConflictError('A vault already exists in this data folder.')
      if (request.keyStorage === 'keychain' && !keyStore.keychainAvailable) {
        throw ValidationError.field('keyStorage', 'the OS keychain is not available on this machine; use a key file')
      }
      await mkdir(dataDir, { recursive: true, mode: 0o700 })
      // A key left by `tessera init` or an earlier attempt is reused rather than replaced.
      const masterKey = (await keyStore.load()) ?? (await keyStore.create(request.keyStorage))
      const result = await initVault({
        dataDir,
        masterKey,
        tenantName: request.tenantName,
        ownerEmail: request.ownerEmail,
        clock: this.options.clock
      })
      this.initialised = true
      this.keyStorage = undefined
      await this.open(masterKey)
      return {
        status: await this.currentStatus(),
        application: { id: result.application.id, name: result.application.name, key: result.application.key }
      }
    })
  }

  /** Opens the vault with the stored key and starts the REST service. */
  unlock(): Promise<VaultStatus> {
    return this.exclusive(async () => {
      if (!this.host) {
        const masterKey = await this.loadKey()
        await this.open(masterKey)
        await this.recordAction(vaultAction('unlock', 'Vault unlocked in the desktop app'))
        for (const change of this.changedWhileLocked.splice(0)) await this.recordAction(settingsAction(`${change} (while the vault was locked)`))
      }
      return this.currentStatus()
    })
  }

  /** Stops the REST service, closes the database and drops the key from memory. */
  lock(message = 'Vault locked in the desktop app'): Promise<VaultStatus> {
    return this.exclusive(async () => {
      if (this.host) await this.recordAction(vaultAction('lock', message))
      await this.close()
      this.error = undefined
      await this.afterLock()
      return this.currentStatus()
    })
  }

  /**
   * Saves and applies a settings change, logged with the desktop user as actor
   * before it is saved. Only a new port, link URL or SMTP configuration
   * restarts the service (local applications' connections are dropped); the
   * idle lock and the audit retention apply without one. Locked, only the port
   * may change (to unlock on a free one; logged when the vault is next
   * unlocked): anything else would go unaudited, so it is refused (503) and
   * nothing is saved.
   */
  async updateSettings(patch: unknown): Promise<DesktopSettings> {
    const previousPort = this.settings.port
    let restart = false
    await this.settings.update(patch, this.settingsSecrets(), async (change) => {
      if (this.host) await this.recordAction(settingsAction(change.message))
      else if (change.portOnly) this.changedWhileLocked.push(change.message)
      else throw new VaultLockedError()
      restart = change.restartsService
    })
    if (restart) await this.restartService(previousPort)
    return this.settings.view()
  }

  /**
   * Restarts the service so changed settings (port, link URL, SMTP) apply. If the new
   * port cannot be bound, the service comes back on `previousPort`, which is
   * saved again, and the caller gets a 409.
   */
  restartService(previousPort: number): Promise<void> {
    return this.exclusive(async () => {
      if (!this.host || !this.masterKey) return
      const masterKey = this.masterKey
      await this.close()
      try {
        await this.open(masterKey)
      } catch (error) {
        const port = this.options.settings.port
        if (port === previousPort) throw error
        await this.options.settings.setPort(previousPort)
        await this.open(masterKey)
        await this.recordAction(settingsAction(`Service port changed back to ${previousPort} (port ${port} is in use)`))
        throw new ConflictError(`Port ${port} is already in use; the service stays on port ${previousPort}.`)
      }
    })
  }

  /** The desktop user as the actor of a key ceremony. */
  ceremonyActor(): CeremonyActor {
    return { userId: this.actor().id, via: 'desktop app' }
  }

  /**
   * Rotates the master key: every key re-wrapped under a new one, which is
   * stored where the current one is kept (OS keychain or key file).
   */
  rotateMasterKey(): Promise<MasterKeyRotated> {
    return this.exclusive(async () => {
      const vault = this.requireVault()
      if ((await this.options.keyStore.locate()) === 'environment') throw new BusinessRuleError(ENVIRONMENT_KEY_ROTATION)
      const next = generateMasterKey()
      const rotated = await vault.services.keys.rotateMaster(this.ceremonyActor(), next, (key) => this.options.keyStore.replace(key))
      this.masterKey = next
      return rotated
    })
  }

  /**
   * "Archive now": the audit entries created before `before` (epoch ms) go to
   * a dated file of the archive folder and out of the vault; null when there
   * were none. Requests keep being served while it prunes.
   */
  async archiveAuditLog(before: number): Promise<AuditArchive | null> {
    const vault = this.requireVault()
    return (await vault.services.auditArchive.archiveToDirectory(this.actor(), before)) ?? null
  }

  /** Quit path: stop serving and close the database; safe to call twice. */
  shutdown(): Promise<void> {
    return this.exclusive(() => this.close())
  }

  private async loadKey(): Promise<MasterKey> {
    try {
      const key = await this.options.keyStore.load()
      if (key) return key
      this.error = 'No master key was found for this vault (neither in the OS keychain nor in master.key).'
    } catch (error) {
      this.error = error instanceof CannotUnlockError ? error.message : 'The master key could not be read.'
    }
    throw new VaultLockedError(this.error)
  }

  private async open(masterKey: MasterKey): Promise<void> {
    const { dataDir, settings, logger, clock } = this.options
    const port = settings.port
    try {
      const mail = async (readSecret: (name: string) => Promise<string | undefined>) =>
        settings.mailConfig(settings.legacyPassword(masterKey) ?? (await readSecret(SMTP_PASSWORD_SETTING)))
      this.host = await startServiceHost({
        dataDir,
        masterKey,
        kind: 'desktop',
        host: SERVICE_HOST,
        port,
        logger,
        clock,
        mail,
        auditRetentionDays: () => settings.auditRetentionDays
      })
      this.masterKey = masterKey
      this.error = undefined
    } catch (error) {
      this.error = describeStartFailure(error, port)
      const { name, code } = error as NodeJS.ErrnoException
      logger.error({ err: { name, code } }, 'vault could not be opened')
      throw new VaultLockedError(this.error)
    }
    await settings.migrateLegacyPassword(masterKey, this.settingsSecrets()!).catch((error: NodeJS.ErrnoException) => {
      logger.error({ err: { name: error.name, code: error.code } }, 'the SMTP password could not be moved into the vault')
    })
  }

  /** The vault is locked whatever `onLock` does: a failure there is logged, not the lock's. */
  private async afterLock(): Promise<void> {
    try {
      await this.options.onLock?.()
    } catch (error) {
      this.options.logger.error({ err: { name: (error as Error).name } }, 'after-lock step failed')
    }
  }

  private async close(): Promise<void> {
    const host = this.host
    this.host = undefined
    this.masterKey = undefined
    if (host) await host.stop()
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work)
    this.turn = run.catch(() => undefined)
    return run
  }
}
