/**
 * Keeps one instance of a team vault in step with the others: changes they
 * announce (storage/change-feed.ts) evict this instance's cached credentials
 * and token rows and reload its keys. While the announcements are not heard
 * (the listening connection is down) the caches are bypassed; when it is back,
 * they start empty and the keys are reloaded, as changes may have been missed.
 * The keys are also reloaded every TEAM_CACHE_TTL_MS, the backstop for a lost
 * notification, as the caches' own expiry is for theirs.
 */
import type { Reader } from '../storage/connections'
import type { Change, ChangeHandlers } from '../storage/change-feed'
import type { Logger } from '../infra/logger'
import type { AuthService } from './auth.service'
import type { Keyring } from './keyring'
import { TEAM_CACHE_TTL_MS } from './service-context'
import type { TokensService } from './tokens.service'
import type { WebhookEvents } from './webhook-events'

export interface FollowedServices {
  auth: AuthService
  tokens: TokensService
  keyring: Keyring
  reader: Reader
  logger: Logger
  /** The webhook subscriptions, reloaded when another instance changes a webhook. */
  webhookEvents?: WebhookEvents
  /** An instance of a newer version asks this one to step aside: it is about to migrate the database (schema `level`). */
  onNewerVersion?: (level: string) => void
}

export class ChangeFollower implements ChangeHandlers {
  private reloading: Promise<void> = Promise.resolve()
  private reloadAgain = false
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly services: FollowedServices) {
    // Nothing is heard until the listener connects.
    this.bypassCaches(true)
  }

  /** Starts the periodic key reload (the backstop). */
  start(intervalMs = TEAM_CACHE_TTL_MS): void {
    this.timer = setInterval(() => {
      void this.reloadKeys()
      this.reloadWebhooks()
    }, intervalMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.reloading
  }

  onChange(change: Change): void {
    const { auth, tokens } = this.services
    switch (change.kind) {
      case 'application':
      case 'session':
        if (change.ids) auth.evict(...change.ids)
        else auth.evictAll()
        break
      case 'token':
        if (change.ids && change.tenantId) tokens.evictChanged(change.tenantId, change.ids)
        else tokens.clearCache()
        break
      case 'keys':
        // Cached rows may name a retired version; the keys themselves are reloaded.
        tokens.clearCache()
        void this.reloadKeys()
        break
      case 'webhook':
        this.reloadWebhooks()
        break
    }
  }

  onConnected(): void {
    this.services.logger.info('Listening for changes made by the other instances of the team vault')
    this.bypassCaches(false)
    void this.reloadKeys()
    this.reloadWebhooks()
  }

  onNewerVersion(level: string): void {
    this.services.onNewerVersion?.(level)
  }

  onDisconnected(error: Error | undefined): void {
    this.services.logger.warn({ reason: error?.message }, 'Lost the connection that hears changes of the other instances; caches are bypassed until it is back')
    this.bypassCaches(true)
  }

  /** Reloads the keyring; a reload asked for while one runs runs once more after it, so none is lost. */
  reloadKeys(): Promise<void> {
    if (this.reloadAgain) return this.reloading
    this.reloadAgain = true
    this.reloading = this.reloading.then(async () => {
      this.reloadAgain = false
      try {
        await this.services.keyring.reload(this.services.reader)
      } catch (error) {
        this.services.logger.error({ err: error }, 'Reloading the vault keys failed; retrying')
      }
    })
    return this.reloading
  }

  private reloadWebhooks(): void {
    this.services.webhookEvents?.reload().catch((error: unknown) => this.services.logger.error({ err: error }, 'Reloading the webhook subscriptions failed; retrying'))
  }

  private bypassCaches(bypassed: boolean): void {
    this.services.auth.bypassCache(bypassed)
    this.services.tokens.bypassCache(bypassed)
  }
}
