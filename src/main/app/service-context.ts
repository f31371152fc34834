/** What every service is built with: readers, the single writer queue, keys, time and logs. */
import type { Reader } from '../storage/connections'
import type { WriteQueue } from '../storage/write-queue'
import type { Logger } from '../infra/logger'
import type { Keyring } from './keyring'

/** Injected time source so expiry logic is testable without sleeping. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export interface ServiceContext {
  reader: Reader
  writes: WriteQueue
  keyring: Keyring
  clock: Clock
  logger: Logger
  cvcRetentionMs: number
}
