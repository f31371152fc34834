/**
 * Group commit (DESIGN §11). Every write goes through one queue that runs the
 * work of concurrent requests inside one transaction per turn, and settles
 * each request only after that transaction commits. One fsync then covers
 * many requests, and "no change without its audit entry" still holds because
 * each unit of work writes its own log rows in the same transaction.
 *
 * If any unit fails, the whole batch is rolled back and each unit is replayed
 * alone, so one bad request never takes its neighbours down with it. Units
 * must therefore be safe to run twice (they only touch the database).
 */
import type { Knex } from 'knex'

export type WriteWork<T> = (trx: Knex.Transaction) => Promise<T>

interface Pending {
  work: WriteWork<unknown>
  resolve(value: unknown): void
  reject(error: unknown): void
}

export class WriteQueue {
  private pending: Pending[] = []
  private draining: Promise<void> | undefined

  constructor(
    private readonly db: Knex,
    private readonly maxBatch = 256
  ) {}

  /** Runs `work` in a transaction shared with other queued writes; resolves after commit. */
  run<T>(work: WriteWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject })
      this.draining ??= this.drain()
    })
  }

  /** Resolves once everything queued so far has settled. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining
  }

  private async drain(): Promise<void> {
    // Let requests that arrive in the same tick join the first batch.
    await new Promise((resolve) => setImmediate(resolve))
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.maxBatch)
        await this.runBatch(batch)
      }
    } finally {
      this.draining = undefined
    }
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    if (batch.length > 1) {
      let results: unknown[] | undefined
      try {
        results = await this.db.transaction(async (trx) => {
          const values: unknown[] = []
          for (const item of batch) values.push(await item.work(trx))
          return values
        })
      } catch {
        results = undefined // replay one by one below
      }
      if (results) {
        batch.forEach((item, index) => item.resolve(results[index]))
        return
      }
    }
    for (const item of batch) {
      try {
        item.resolve(await this.db.transaction(item.work))
      } catch (error) {
        item.reject(error)
      }
    }
  }
}
