import { beforeEach, describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import { rowsOf, WriteQueue, type RowBuffer, type RowSealer } from '../../src/main/storage/write-queue'
import { useTemporaryDatabase } from '../helpers/database'

const COLUMNS = ['name', 'last_run_at']

describe('WriteQueue', () => {
  const temporary = useTemporaryDatabase('wq', { each: true })
  const db = () => temporary.db
  let queue: WriteQueue

  beforeEach(() => {
    queue = new WriteQueue(db().writer)
  })

  const names = async () => (await sql(db().reader)('job_runs').select('name').orderBy('name')).map((row) => row.name)

  it('commits the appended rows of concurrent requests and resolves each with its own result', async () => {
    const results = await Promise.all(
      ['a', 'b', 'c'].map((name) => queue.append((rows) => (rows.insert('job_runs', COLUMNS, [{ name, last_run_at: 1 }]), name.toUpperCase())))
    )
    expect(results).toEqual(['A', 'B', 'C'])
    expect(await names()).toEqual(['a', 'b', 'c'])
  })

  it('reports a duplicate to the request that caused it and still commits its neighbours', async () => {
    await queue.append((rows) => rows.insert('job_runs', COLUMNS, [{ name: 'taken', last_run_at: 1 }]))
    const outcomes = await Promise.allSettled(
      ['x', 'taken', 'y'].map((name) =>
        queue.append((rows) => rows.insert('job_runs', COLUMNS, [{ name, last_run_at: 2 }], { onConflict: () => new Error(`duplicate ${name}`) }))
      )
    )
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('duplicate taken')
    expect(await names()).toEqual(['taken', 'x', 'y'])
  })

  it('adds counter rows of one batch up per key and adds them to the stored counters, in scripts and in transactions', async () => {
    const COUNTER = { key: ['name'], column: 'last_run_at' }
    const count = (name: string, delta: number) => (rows: RowBuffer) => rows.insert('job_runs', COLUMNS, [{ name, last_run_at: delta }], { addTo: COUNTER })
    await Promise.all([queue.append(count('a', 1)), queue.append(count('a', 2)), queue.append(count('b', 5))])
    await Promise.all([queue.append(count('a', 10)), queue.run(async (tx) => count('b', -1)(rowsOf(tx)))])
    const counters = await sql(db().reader)('job_runs').select('name', 'last_run_at').orderBy('name')
    expect(counters).toEqual([
      { name: 'a', last_run_at: 13 },
      { name: 'b', last_run_at: 4 }
    ])
  })

  it('lets a transactional unit read rows appended earlier in the same batch', async () => {
    const [, seen] = await Promise.all([
      queue.append((rows) => rows.insert('job_runs', COLUMNS, [{ name: 'early', last_run_at: 1 }])),
      queue.run(async (trx) => (await sql(trx)('job_runs').where({ name: 'early' }).first())?.name)
    ])
    expect(seen).toBe('early')
  })

  it('answers each batch with its own outcomes while the next batch is already committing', async () => {
    const insert = (name: string) => queue.append((rows) => (rows.insert('job_runs', COLUMNS, [{ name, last_run_at: 1 }], { onConflict: () => new Error(`duplicate ${name}`) }), name))
    const firstWave = ['a', 'b'].map(insert)
    await new Promise((resolve) => setImmediate(resolve)) // the first batch is on its way to SQLite
    const secondWave = ['c', 'a', 'd'].map(insert)
    const outcomes = await Promise.allSettled([...firstWave, ...secondWave])
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : outcome.reason.message))).toEqual([
      'a',
      'b',
      'c',
      'duplicate a',
      'd'
    ])
    expect(await names()).toEqual(['a', 'b', 'c', 'd'])
  })

  describe('with a sealer', () => {
    /** Stamps sealed job_runs rows with consecutive numbers in `last_run_at`, as the audit chain stamps seq. */
    function counter(): RowSealer<number> & { head: number } {
      return {
        head: 0,
        seal(rows, last) {
          for (const row of rows as { last_run_at: number }[]) row.last_run_at = ++last
          return last
        },
        advance(last) {
          this.head = last
        }
      }
    }

    const stamps = async () => (await sql(db().reader)('job_runs').select('name', 'last_run_at').orderBy('last_run_at')).map((row) => [row.name, row.last_run_at])

    it('stamps rows in commit order across batches, and a failed batch moves nothing on', async () => {
      const sealer = counter()
      queue = new WriteQueue(db().writer, { sealer })
      const insert = (name: string) => queue.append((rows) => rows.insert('job_runs', COLUMNS, [{ name, last_run_at: 0 }], { onConflict: () => new Error(`duplicate ${name}`), sealed: true }))
      await Promise.all(['a', 'b'].map(insert))
      expect(sealer.head).toBe(2)
      // This batch fails as a whole (a duplicate), rolls back, and is replayed one unit at a time.
      const outcomes = await Promise.allSettled(['c', 'a', 'd'].map(insert))
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
      await expect(queue.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
      expect(sealer.head).toBe(4)
      expect(await stamps()).toEqual([['a', 1], ['b', 2], ['c', 3], ['d', 4]])
    })

    it('keeps bulk units within a batch weight, lets light units behind them go first, and always takes the oldest', async () => {
      const batches: string[][] = []
      const sealer: RowSealer<number> = {
        head: 0,
        seal(rows, last) {
          batches.push((rows as { name: string }[]).map((row) => row.name))
          return last + rows.length
        },
        advance() {}
      }
      queue = new WriteQueue(db().writer, { sealer, maxWeight: 10, maxWeightAhead: 1 })
      const insert = (name: string, weight: number) =>
        queue.append((rows) => rows.insert('job_runs', COLUMNS, [{ name, last_run_at: 0 }], { sealed: true }), weight)
      // Queued in one tick, oldest first: bulk units of weight 6, 6, 4 and 20 with two single-row units between them.
      await Promise.all([insert('bulk 6a', 6), insert('bulk 6b', 6), insert('single 1', 1), insert('bulk 4', 4), insert('single 2', 1), insert('bulk 20', 20)])
      expect(batches).toEqual([['single 1', 'single 2'], ['bulk 6a', 'bulk 4'], ['bulk 6b'], ['bulk 20']])
      expect(await names()).toHaveLength(6)
    })

    it('seals rows a transactional unit queues through rowsOf before the transaction commits', async () => {
      const sealer = counter()
      queue = new WriteQueue(db().writer, { sealer })
      const seen = await queue.run(async (trx) => {
        rowsOf(trx).insert('job_runs', COLUMNS, [{ name: 'queued', last_run_at: 0 }], { sealed: true })
        return 'done'
      })
      expect(seen).toBe('done')
      expect(await stamps()).toEqual([['queued', 1]])
      await expect(queue.run(async (trx) => {
        rowsOf(trx).insert('job_runs', COLUMNS, [{ name: 'rolled back', last_run_at: 0 }], { sealed: true })
        throw new Error('boom')
      })).rejects.toThrow('boom')
      expect(sealer.head).toBe(1)
      expect(() => rowsOf({} as never)).toThrow(/write queue/)
    })
  })

  it('rolls back every write of a failing unit', async () => {
    const failing = queue.run(async (trx) => {
      await sql(trx)('job_runs').insert({ name: 'half', last_run_at: 1 })
      throw new Error('boom')
    })
    await expect(failing).rejects.toThrow('boom')
    expect(await names()).toEqual([])
  })
})
