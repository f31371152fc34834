/**
 * Group commit. Every write goes through one queue that runs the
 * work of concurrent requests inside one transaction per turn, and settles
 * each request only after that transaction commits. One fsync then covers
 * many requests, and "no change without its audit entry" still holds because
 * each unit of work writes its own log rows in the same transaction.
 *
 * Two kinds of work:
 * - `run(work)` gets the transaction and may read and write; rows appended
 *   earlier in the batch are flushed first (on PostgreSQL, committed first:
 *   see `runBatch`), so its reads see them.
 * - `append(work)` only queues rows (a token and its log entry, the log entry
 *   of a read). Appended rows of the whole batch are written as one multi-row
 *   INSERT per table, which is what lifts single-request throughput.
 *
 * If anything in a batch fails, the batch is rolled back and each unit is
 * replayed alone, so one bad request never takes its neighbours down with it.
 * Units must therefore be safe to run twice (they only touch the database).
 *
 * A batch is the oldest waiting unit and the units after it, in order, that
 * fit within the batch's limits; a bulk unit that does not fit waits for the
 * next batch while lighter units behind it go ahead (see `takeBatch`).
 *
 * A `RowSealer` stamps the rows of one table (the audit log) in the order
 * they are written, batch after batch: the chain's state moves on only when
 * a batch commits, so a failed batch leaves no gap or fork behind.
 */
import type { Knex } from 'knex'
import { sql, txOf, type Tx, type Writer } from './connections'
import { engineOf, type Engine } from './dialect'
import { insertRows, isTransientConflict, isUniqueViolation, type AddOnConflict } from './sql'
import { commitPostgresInserts, runPostgresBatch, runPostgresInserts, type RawPostgres } from './postgres-batch'
import { isStaleState, runInsertScript, scriptEngine, type InsertStatement, type RawSqlite, type ScriptGuard } from './sql-script'
import { tenantKeys, type TenantKeys } from './tenant-keys'

export interface InsertOptions {
  /** The error a uniqueness violation stands for (a duplicate id), reported to the unit that caused it. */
  onConflict?: () => Error
  /** Whether the queue's sealer stamps these rows (the audit log's). */
  sealed?: boolean
  /** Counter rows: a batch's rows of one key are added up and added to the stored counter (one row per key per commit). */
  addTo?: AddOnConflict
  /** The row property each column's value is read from, if not the column's own name (see InsertStatement). */
  properties?: readonly string[]
}

/** Rows waiting for the batch's multi-row inserts; repositories queue their rows here. */
export interface RowBuffer {
  /** Queues rows for `table`; a table takes rows of one kind only (sealed or not). */
  insert(table: string, columns: readonly string[], rows: readonly object[], options?: InsertOptions): void
  /** The tenant keys of the database the rows go to. */
  readonly tenantKeys: TenantKeys
  /** The engine of the database the rows go to, for the stored forms that depend on it (dialect.ts). */
  readonly engine: Engine
}

/**
 * Stamps the rows queued as `sealed` just before they are written, in commit
 * order (the audit chain: seq and MAC). A link is the chain's state after a row.
 */
export interface RowSealer<Link = unknown> {
  /** The link after the last committed row. */
  readonly head: Link
  /** Stamps `rows` in order after `link`; returns the link after the last of them. */
  seal(rows: readonly object[], link: Link): Link
  /** Adopts the last link of a batch that committed. */
  advance(link: Link): void
  /**
   * For a table other processes append to as well (a team vault's audit log):
   * waits for the table's turn, held until the transaction ends, and returns the
   * link after the last row anyone committed, and whether another process had
   * appended since this one's last commit; `run` sends statements in the batch's
   * transaction. Absent when this process is the only writer.
   */
  resume?(run: RunScript): Promise<{ link: Link; othersAppended: boolean }>
  /**
   * With `resume`, for a batch written in one trip (PostgreSQL's script): the
   * script's first step, which waits for the table's turn and fails with
   * STALE_STATE unless `link` is still the link after the last committed row.
   */
  expectHead?(link: Link): ScriptGuard
}

/** Sends a script of statements in a transaction of the queue; resolves with each statement's result, in order. */
export type RunScript = (script: string) => PromiseLike<readonly { rows: unknown[] }[]>

export type WriteWork<T> = (tx: Tx) => Promise<T>
export type AppendWork<T> = (rows: RowBuffer) => T

type Settle = () => void

/** The writer's driver connection, as knex's pool hands it out (`sqlite3`'s or `pg`'s). */
type WriterConnection = RawSqlite | RawPostgres

/** The writer's connection and the engine whose one-trip path it takes (scriptEngine). */
interface OneTrip {
  engine: 'sqlite' | 'postgres'
  connection: WriterConnection
}

/** Runs of a lone unit that PostgreSQL ended for a deadlock or a serialisation failure before its error is given up. */
const MAX_ATTEMPTS_ALONE = 3

/** Units per batch. */
const MAX_BATCH_UNITS = 512
/**
 * The weight of a batch, about the rows it writes: four bulk tokenize requests of 1,000
 * tokens and a batch's worth of single-row units. Building and sealing a batch's rows runs
 * on the event loop, and every request's audit entry waits for the batch ahead of it:
 * sixteen concurrent bulk requests used to go as one batch of 16,000 tokens.
 */
const MAX_BATCH_WEIGHT = 4000 + MAX_BATCH_UNITS
/** The heaviest unit that may go ahead of a heavier, older one: a page's read entries. */
const MAX_WEIGHT_AHEAD = 100

type Unit = { kind: 'run'; work: WriteWork<unknown> } | { kind: 'append'; work: AppendWork<unknown> }

interface Pending {
  unit: Unit
  /** About how many rows the unit writes (see `append`). */
  weight: number
  resolve(value: unknown): void
  reject(error: unknown): void
}

interface TableRows extends InsertStatement, InsertOptions {
  rows: object[]
}

/** The row buffer of each transaction the queue runs, for `rowsOf`. */
const transactionRows = new WeakMap<Tx, RowBuffer>()

/**
 * The row buffer of a transaction the write queue runs: rows queued here are
 * written (and sealed) before the next unit of the batch and before commit.
 */
export function rowsOf(tx: Tx): RowBuffer {
  const rows = transactionRows.get(tx)
  if (!rows) throw new Error('Rows can only be queued in a transaction of the write queue')
  return rows
}

/** The row buffer to queue into: an appended unit's own, or that of a transaction of the queue. */
export function bufferOf(into: Tx | RowBuffer): RowBuffer {
  return into instanceof BatchRows ? into : rowsOf(into as Tx)
}

/**
 * Writes what a transaction of the queue has queued so far, now: later reads
 * in the transaction see it, and a conflict surfaces here, as the unit's error.
 */
export async function flushRows(tx: Tx): Promise<void> {
  await (rowsOf(tx) as BatchRows).flush(sql(tx))
}

class BatchRows implements RowBuffer {
  /** In the order tables were first used. */
  private statements: TableRows[] = []
  /** By table, then by column list (callers pass constant lists, so identity is enough and costs nothing per row). */
  private byTable = new Map<string, Map<readonly string[], TableRows>>()
  /** The sealer's state after the rows of this batch sealed so far. */
  private link: unknown

  /**
   * @param oneTrip the writer's connection, when its driver takes a batch in one trip: the rows
   *   of a batch of appends then go as one script-transaction (runAsScript), and on PostgreSQL
   *   what a transaction queues is flushed in one round trip (runPostgresInserts), not a
   *   statement per table
   */
  constructor(
    private readonly sealer: RowSealer | undefined,
    readonly tenantKeys: TenantKeys,
    readonly engine: Engine,
    private readonly oneTrip?: OneTrip
  ) {
    this.link = sealer?.head
  }

  /**
   * Continues from the table's committed head when other processes append to it too
   * (see RowSealer.resume); resolves with whether one of them had appended since this process's last commit.
   */
  async resume(run: RunScript): Promise<boolean> {
    if (!this.sealer?.resume) return false
    const { link, othersAppended } = await this.sealer.resume(run)
    this.link = link
    return othersAppended
  }

  /** Hands the sealer this batch's last link, once the batch has committed. */
  committed(): void {
    this.sealer?.advance(this.link)
  }

  insert(table: string, columns: readonly string[], rows: readonly object[], { onConflict, sealed, addTo, properties }: InsertOptions = {}): void {
    if (rows.length === 0) return
    let byColumns = this.byTable.get(table)
    if (!byColumns) this.byTable.set(table, (byColumns = new Map()))
    let entry = byColumns.get(columns)
    if (!entry) {
      byColumns.set(columns, (entry = { table, columns, properties, rows: [], sealed, addTo }))
      this.statements.push(entry)
    }
    for (const row of rows) entry.rows.push(row)
    entry.onConflict ??= onConflict
  }

  /** Writes everything queued, tables in the order they were first used. */
  async flush(trx: Knex): Promise<void> {
    if (this.oneTrip?.engine === 'postgres') return this.flushInOneTrip(this.oneTrip.connection as RawPostgres)
    for (const statement of this.takeSealed()) {
      try {
        await insertRows(trx, statement.table, statement.columns, statement.rows, statement.addTo, statement.properties)
      } catch (error) {
        throw this.conflictOf(statement, error)
      }
    }
  }

  /**
   * Runs everything queued as one script-transaction (the one-trip path). A
   * table other processes append to too is sealed from the sealer's last
   * committed link, which the script's guard checks is still the head.
   */
  async runAsScript(): Promise<void> {
    if (!this.oneTrip) throw new Error('Only a batch given the writer for one trip runs as a script')
    const { engine, connection } = this.oneTrip
    const statements = this.takeSealed()
    try {
      if (engine === 'sqlite') await runInsertScript(connection as RawSqlite, statements)
      else await runPostgresBatch(connection as RawPostgres, statements, this.sealer?.expectHead?.(this.sealer.head))
    } catch (error) {
      throw isStaleState(error) ? error : this.conflictOfAny(statements, error)
    }
  }

  /**
   * Runs everything queued as a transaction in two round trips (PostgreSQL): the first
   * begins it and takes the sealed table's turn, the second writes the rows, sealed
   * from the head the turn read, and commits. Resolves with whether another process
   * had appended since this one's last commit (see RowSealer.resume).
   */
  async runAfterTurn(): Promise<boolean> {
    const connection = this.oneTrip!.connection as RawPostgres
    let statements: TableRows[] = []
    try {
      const othersAppended = await this.resume(async (script) => ((await connection.query(`BEGIN;${script}`)) as { rows: unknown[] }[]).slice(1))
      statements = this.takeSealed()
      await commitPostgresInserts(connection, statements)
      return othersAppended
    } catch (error) {
      await connection.query('ROLLBACK').catch(() => undefined) // nothing to roll back if COMMIT itself failed
      throw this.conflictOfAny(statements, error)
    }
  }

  private async flushInOneTrip(connection: RawPostgres): Promise<void> {
    const statements = this.takeSealed()
    try {
      await runPostgresInserts(connection, statements)
    } catch (error) {
      throw this.conflictOfAny(statements, error)
    }
  }

  /** Everything queued, its sealed tables' rows stamped in order; a batch that then fails is dropped with its link. */
  private takeSealed(): TableRows[] {
    const statements = this.take()
    for (const statement of statements) if (this.sealer && statement.sealed) this.link = this.sealer.seal(statement.rows, this.link)
    return statements
  }

  private take(): TableRows[] {
    const statements = this.statements
    this.statements = []
    this.byTable = new Map()
    return statements
  }

  private conflictOf(statement: { onConflict?: () => Error }, error: unknown): unknown {
    return statement.onConflict && isUniqueViolation(error) ? statement.onConflict() : error
  }

  /** With several tables in one trip, only a lone unit's conflict can be attributed. */
  private conflictOfAny(statements: readonly TableRows[], error: unknown): unknown {
    const withConflict = statements.find((statement) => statement.onConflict)
    return withConflict ? this.conflictOf(withConflict, error) : error
  }
}

export class WriteQueue {
  private pending: Pending[] = []
  private draining: Promise<void> | undefined
  /**
   * Whether the last batch found rows another process had appended to the sealed table
   * (a team vault's instances writing at once). While it did, a batch of appends takes
   * the table's turn first: sealed from this process's last commit, it would most likely
   * be refused with STALE_STATE after a round trip, and be built, sealed and sent again.
   */
  private othersAppending = false

  /** Whether the last batch was light units that went ahead of an older bulk unit (see `takeBatch`). */
  private lightWentAhead = false

  private get maxWeightAhead(): number {
    return this.options.maxWeightAhead ?? MAX_WEIGHT_AHEAD
  }

  /** SQLite through sqlite3 or PostgreSQL through pg: batches of appends run as one script (see sql-script.ts). */
  private readonly scriptable: 'sqlite' | 'postgres' | undefined

  /**
   * @param options.maxBatch units per transaction
   * @param options.maxWeight the total weight of a transaction's units (the oldest unit always goes)
   * @param options.maxWeightAhead the heaviest unit that may go ahead of a heavier, older one
   * @param options.sealer stamps the rows of its table in commit order (the audit chain)
   */
  private readonly db: Knex
  private readonly tenantKeys: TenantKeys
  private readonly engine: Engine

  constructor(
    writer: Writer,
    private readonly options: { maxBatch?: number; maxWeight?: number; maxWeightAhead?: number; sealer?: RowSealer } = {}
  ) {
    this.db = sql(writer)
    this.tenantKeys = tenantKeys(writer)
    this.engine = engineOf(this.db)
    this.scriptable = scriptEngine(this.db)
  }

  /** Runs `work` in a transaction shared with other queued writes; resolves after commit. */
  run<T>(work: WriteWork<T>, weight = 1): Promise<T> {
    return this.enqueue({ kind: 'run', work }, weight)
  }

  /**
   * Queues rows for the next batch's multi-row inserts; resolves with `work`'s result after commit.
   * @param weight about how many rows, or tokens, `work` writes: a bulk unit gives its count, so that
   *   a batch holds few of them (one row per unit needs no weight)
   */
  append<T>(work: AppendWork<T>, weight = 1): Promise<T> {
    return this.enqueue({ kind: 'append', work }, weight)
  }

  /** Resolves once everything queued so far has settled. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining
  }

  private enqueue<T>(unit: Unit, weight: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ unit, weight, resolve: resolve as (value: unknown) => void, reject })
      this.draining ??= this.drain()
    })
  }

  private async drain(): Promise<void> {
    // Let requests that arrive in the same tick join the first batch.
    await new Promise((resolve) => setImmediate(resolve))
    let connection: WriterConnection | undefined
    let settlePrevious: Settle | undefined
    try {
      // Hold the writer connection while there is work: a pool round trip per batch costs as much as the batch.
      connection = (await this.db.client.acquireConnection()) as WriterConnection
      // Pipelined: the next batch is handed to SQLite before the previous batch's requests
      // are answered, so its commit runs while the event loop writes those responses.
      for (;;) {
        if (this.pending.length === 0) {
          settlePrevious?.()
          settlePrevious = undefined
          // Requests read in this turn of the event loop are on their way: wait for them
          // rather than give the connection back and take it again a moment later.
          await new Promise((resolve) => setImmediate(resolve))
          if (this.pending.length === 0) break
        }
        const committing = this.runBatch(connection, this.takeBatch())
        settlePrevious?.()
        settlePrevious = await committing
      }
    } catch (error) {
      for (const item of this.pending.splice(0)) item.reject(error)
    } finally {
      settlePrevious?.() // a committed batch is answered whatever happens next
      if (connection) this.db.client.releaseConnection(connection)
      this.draining = undefined
    }
  }

  /**
   * The next batch: the oldest unit and each later unit, in order, that keeps the batch within
   * its limits of units and weight; a unit that does not fit keeps its place for the next batch.
   * When the oldest unit is a bulk one, the light units behind it (a read's audit entry, a page's)
   * first go in a batch of their own, once per bulk batch: a read waits for the batch in
   * progress, not for every bulk request queued before it.
   */
  private takeBatch(): Pending[] {
    const lightFirst = !this.lightWentAhead && this.pending[0].weight > this.maxWeightAhead
    const batch = lightFirst ? this.takeFitting(this.maxWeightAhead) : []
    this.lightWentAhead = batch.length > 0
    return this.lightWentAhead ? batch : this.takeFitting(Infinity)
  }

  /** Takes the units of at most `unitWeight`, oldest first, within the batch's limits (the first always fits). */
  private takeFitting(unitWeight: number): Pending[] {
    const maxUnits = this.options.maxBatch ?? MAX_BATCH_UNITS
    const maxWeight = this.options.maxWeight ?? MAX_BATCH_WEIGHT
    const batch: Pending[] = []
    const waiting: Pending[] = []
    let weight = 0
    let index = 0
    for (; index < this.pending.length && batch.length < maxUnits; index++) {
      const item = this.pending[index]
      if (item.weight <= unitWeight && (batch.length === 0 || weight + item.weight <= maxWeight)) {
        batch.push(item)
        weight += item.weight
      } else waiting.push(item)
    }
    this.pending = waiting.concat(this.pending.slice(index))
    return batch
  }

  /**
   * Commits a batch; returns how to settle its requests (called by `drain` when it suits the pipeline).
   * On PostgreSQL, a batch that also holds transactional units (a sweep, an update) commits its
   * appends first as a script of their own, and then the rest: otherwise one such unit would send
   * every append of its batch statement by statement, each a round trip. The rest still sees those
   * rows. (On SQLite a statement costs no round trip, and a second commit would cost a second fsync.)
   */
  private async runBatch(connection: WriterConnection, batch: Pending[]): Promise<Settle> {
    const appends = this.scriptable === 'postgres' ? batch.filter((item) => item.unit.kind === 'append') : []
    if (appends.length === 0 || appends.length === batch.length) return this.runUnits(connection, batch)
    const settleAppends = await this.runUnits(connection, appends)
    const settleRest = await this.runUnits(connection, batch.filter((item) => item.unit.kind !== 'append'))
    return () => {
      settleAppends()
      settleRest()
    }
  }

  /** Commits units in one transaction, or one by one if that fails; returns how to settle them (never rejects). */
  private async runUnits(connection: WriterConnection, batch: Pending[]): Promise<Settle> {
    if (batch.length > 1) {
      const results = await this.transact(connection, batch.map((item) => item.unit)).catch(() => undefined)
      if (results) return () => batch.forEach((item, index) => item.resolve(results[index]))
    }
    const outcomes: { ok: boolean; value: unknown }[] = []
    for (const item of batch) {
      try {
        outcomes.push({ ok: true, value: await this.transactAlone(connection, item.unit) })
      } catch (error) {
        outcomes.push({ ok: false, value: error })
      }
    }
    return () => batch.forEach((item, index) => (outcomes[index].ok ? item.resolve : item.reject)(outcomes[index].value))
  }

  /** One unit in a transaction of its own; one that another instance's transaction deadlocked is run again. */
  private async transactAlone(connection: WriterConnection, unit: Unit): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.transact(connection, [unit]))[0]
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS_ALONE || !isTransientConflict(error)) throw error
      }
    }
  }

  /** A batch of appends, queued into rows of its own and written by `write` outside a knex transaction; resolves with their results once committed. */
  private async appendInTrips(oneTrip: OneTrip, units: Unit[], write: (rows: BatchRows) => Promise<void>): Promise<unknown[]> {
    const rows = new BatchRows(this.options.sealer, this.tenantKeys, this.engine, oneTrip)
    const results = units.map((unit) => (unit as { work: AppendWork<unknown> }).work(rows))
    await write(rows)
    rows.committed()
    return results
  }

  private async transact(connection: WriterConnection, units: Unit[]): Promise<unknown[]> {
    const oneTrip = this.scriptable && { engine: this.scriptable, connection }
    if (oneTrip && units.every((unit) => unit.kind === 'append')) {
      if (!this.othersAppending) {
        try {
          return await this.appendInTrips(oneTrip, units, (rows) => rows.runAsScript())
        } catch (error) {
          // Another process appended to the chain since this one's last commit: run the batch
          // again after taking the chain's turn, sealed from the committed head.
          if (!isStaleState(error)) throw error
          this.othersAppending = true
        }
      }
      if (oneTrip.engine === 'postgres' && this.options.sealer?.resume) {
        return this.appendInTrips(oneTrip, units, async (rows) => {
          this.othersAppending = await rows.runAfterTurn()
        })
      }
    }
    const rows = new BatchRows(this.options.sealer, this.tenantKeys, this.engine, oneTrip)
    const results = await this.db.transaction(async (trx) => {
      const tx = txOf(trx)
      transactionRows.set(tx, rows)
      this.othersAppending = await rows.resume((script) => trx.raw(script))
      const outcomes: unknown[] = []
      for (const unit of units) {
        if (unit.kind === 'append') {
          outcomes.push(unit.work(rows))
        } else {
          await rows.flush(trx)
          outcomes.push(await unit.work(tx))
        }
      }
      await rows.flush(trx)
      return outcomes
    }, { connection })
    rows.committed()
    return results
  }
}
