/** What every service is built with: readers, the single writer queue, keys, time and logs. */
import type { Reader } from '../storage/connections'
import type { WriteQueue } from '../storage/write-queue'
import type { Logger } from '../infra/logger'
import type { Clock } from '../domain/actor'
import type { Keyring } from './keyring'

export interface ServiceContext {
  reader: Reader
  writes: WriteQueue
  keyring: Keyring
  clock: Clock
  logger: Logger
  cvcRetentionMs: number
}
