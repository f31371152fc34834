/**
 * The handles storage gives the layers above it: the read pool, the writer
 * and open transactions. They are opaque: the services pass them to
 * repository functions and to the write queue and never look inside, so
 * nothing above storage/ depends on knex, on SQL or on the database engine.
 */
import type { Knex } from 'knex'

declare const handle: unique symbol

/** The pool of read connections (WAL lets them read while the writer writes). */
export type Reader = { readonly [handle]: 'reader' }
/** The single writer connection: the write queue's, and start-up work's before it runs. */
export type Writer = { readonly [handle]: 'writer' }
/** An open write transaction. */
export type Tx = { readonly [handle]: 'tx' }
/** What a repository function reads or writes with; a read inside a transaction sees its writes. */
export type Db = Reader | Writer | Tx

/** The knex instance or transaction behind a handle: for storage/ only. */
export function sql(db: Db): Knex {
  return db as unknown as Knex
}

export function readerOf(knex: Knex): Reader {
  return knex as unknown as Reader
}

export function writerOf(knex: Knex): Writer {
  return knex as unknown as Writer
}

export function txOf(trx: Knex.Transaction): Tx {
  return trx as unknown as Tx
}

/** Runs `work` in one transaction of the writer: start-up work that runs before (or without) the write queue. */
export function inTransaction<T>(writer: Writer, work: (tx: Tx) => Promise<T>): Promise<T> {
  return sql(writer).transaction((trx) => work(txOf(trx)))
}
