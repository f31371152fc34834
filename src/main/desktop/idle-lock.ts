/**
 * The idle lock: an unlocked desktop vault locks itself when the computer has
 * been idle (no keyboard or mouse input anywhere) for the configured minutes,
 * and at once when the computer goes to sleep or its screen locks. Electron-
 * free: the glue (electron/idle-monitor.ts) reports the system's idle time
 * every second and the power events; the window reports when its user asks
 * to stay unlocked (the countdown's button), which counts as activity too.
 */

/** Minutes of idleness before the vault locks, unless configured otherwise. */
export const DEFAULT_IDLE_LOCK_MINUTES = 15
export const MIN_IDLE_LOCK_MINUTES = 1
export const MAX_IDLE_LOCK_MINUTES = 480

export type PowerEvent = 'suspend' | 'lock-screen'

const POWER_EVENT_MESSAGES: Record<PowerEvent, string> = {
  suspend: 'Vault locked: the computer went to sleep',
  'lock-screen': 'Vault locked: the screen was locked'
}

export interface IdleLockDeps {
  isUnlocked(): boolean
  /** Locks the vault, writing `message` to the audit log under the desktop user. */
  lock(message: string): Promise<unknown>
  minutes(): number
  now(): number
}

export class IdleLock {
  private lockAtMs: number | undefined
  /** When the window last reported its user active (epoch ms). */
  private activeAtMs: number | undefined
  private locking: Promise<unknown> | undefined

  constructor(private readonly deps: IdleLockDeps) {}

  /** Takes the system's idle time; locks once it reaches the configured minutes. */
  async reportIdle(idleSeconds: number): Promise<void> {
    if (!this.deps.isUnlocked()) {
      this.lockAtMs = undefined
      return
    }
    const minutes = this.deps.minutes()
    const idleMs = Math.min(idleSeconds * 1000, this.activeAtMs === undefined ? Infinity : this.deps.now() - this.activeAtMs)
    const leftMs = minutes * 60_000 - idleMs
    this.lockAtMs = this.deps.now() + Math.max(0, leftMs)
    if (leftMs <= 0) await this.lockOnce(`Vault locked after ${minutes} minute${minutes === 1 ? '' : 's'} idle`)
  }

  /** The window's user is active: the idle time starts over, whatever the system reports. */
  reportActivity(): void {
    if (!this.deps.isUnlocked()) return
    this.activeAtMs = this.deps.now()
    this.lockAtMs = this.activeAtMs + this.deps.minutes() * 60_000
  }

  /** The computer went to sleep or its screen locked: lock now. */
  async reportPowerEvent(event: PowerEvent): Promise<void> {
    if (this.deps.isUnlocked()) await this.lockOnce(POWER_EVENT_MESSAGES[event])
  }

  /** When the vault locks if the computer stays idle (epoch ms); undefined while locked or before the first report. */
  lockAt(): number | undefined {
    return this.deps.isUnlocked() ? this.lockAtMs : undefined
  }

  /** One lock at a time: reports keep arriving every second while a lock is under way. */
  private async lockOnce(message: string): Promise<void> {
    this.locking ??= this.deps.lock(message).finally(() => {
      this.locking = undefined
      this.lockAtMs = undefined
      this.activeAtMs = undefined
    })
    await this.locking
  }
}
