/**
 * Runs the whole local service: opens the vault, serves REST (on loopback, or
 * beyond it only with TLS or trusted proxies and a Host allow-list) and runs
 * the background jobs. Shared by `tessera serve`, the desktop
 * app and the API tests, so all three exercise the same start and stop path.
 */
import type { MasterKey } from '../crypto/types'
import type { Logger } from '../infra/logger'
import { listen, resolveListenAddress, type TlsMaterial } from '../infra/listen'
import { createServer, type ServerOptions } from '../server/app'
import type { Clock } from '../app/service-context'
import { plainTextOnlyToProxies, requireSafeExposure } from './exposure'
import { openVault, type MailConfigSource, type OpenOptions, type Vault } from './vault'

export interface ServiceHostOptions extends Omit<ServerOptions, 'logger'> {
  dataDir: string
  /** A team vault's PostgreSQL URL; the file in `dataDir` when absent. */
  databaseUrl?: string
  masterKey: MasterKey
  /** Who serves the vault (`tessera status` shows it); `serve` by default. */
  kind?: OpenOptions['kind']
  host: string
  port: number
  /** Serve HTTPS with this certificate and key. */
  tls?: TlsMaterial
  logger: Logger
  clock?: Clock
  /** SMTP and link settings (or how to build them from sealed settings); links default to this service's own URL. */
  mail?: MailConfigSource
  /** How long a card's CVC is kept; default `TESSERA_CVC_RETENTION`, else one hour. */
  cvcRetentionMs?: number
  /** Days audit entries are kept before they are archived; 0 or none keeps them for ever. */
  auditRetentionDays?: OpenOptions['auditRetentionDays']
  /** Webhook delivery: the allow-list, retries and time-outs. */
  webhooks?: OpenOptions['webhooks']
  /** How far ahead a session's `expires_at` may be set; 24 hours by default. */
  sessionMaxTtlMs?: number
  /** How often the background jobs look for due work (ms); 0 leaves the timer off (tests call `runDueJobs()`). */
  jobTickMs?: number
  /** Upgrading a team vault: how long to wait for instances of an older version to step aside (see OpenOptions). */
  olderInstancesWaitMs?: OpenOptions['olderInstancesWaitMs']
  /** A team vault: an instance of a newer version asks this one to step aside (see OpenOptions). */
  onNewerVersion?: OpenOptions['onNewerVersion']
}

export interface ServiceHost {
  vault: Vault
  url: string
  /** Stops accepting requests, lets in-flight ones finish, then closes the database. */
  stop(): Promise<void>
}

/** @throws ExposureRefusedError (before the vault is opened), CannotUnlockError, VaultInUseError, ListenError */
export async function startServiceHost(options: ServiceHostOptions): Promise<ServiceHost> {
  // The address checked is the address bound: a name is resolved once.
  const listenOn = await resolveListenAddress(options.host, options.port)
  requireSafeExposure(listenOn, options)
  const vault = await openVault(options)
  try {
    const app = createServer(vault.services, { ...options, onlyFromProxies: plainTextOnlyToProxies(listenOn, options) })
    const running = await listen(app.callback(), listenOn.address, options.port, options.tls)
    await vault.recordUrl(running.url).catch(async (error) => {
      await running.close()
      throw error
    })
    vault.services.mail.useServiceUrl(running.url)
    if (options.jobTickMs !== 0) vault.services.jobs.start(options.jobTickMs)
    vault.services.webhookDelivery.start()
    let stopping: Promise<void> | undefined
    return {
      vault,
      url: running.url,
      stop: () =>
        (stopping ??= (async () => {
          await running.close()
          await vault.services.jobs.stop()
          await vault.close()
        })())
    }
  } catch (error) {
    await vault.services.jobs.stop()
    await vault.close()
    throw error
  }
}
