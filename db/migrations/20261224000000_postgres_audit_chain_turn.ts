import type { Knex } from 'knex'
import { isPostgres } from './dialect'

/**
 * PostgreSQL: the audit chain's turn for a batch written in one trip, as a
 * function. It takes the chain's advisory lock (held to the end of the
 * transaction), then checks that the newest entry is still the head the batch
 * was sealed from, and raises SQLSTATE `TSS01` (the service's "stale state":
 * the batch is sealed again from the committed head) when another instance
 * appended meanwhile. Each statement of a volatile function reads with a fresh
 * snapshot, so the check sees everything committed before the lock was granted.
 *
 * As an anonymous `DO` block sent with each batch, the same check was parsed
 * and compiled by PL/pgSQL on every commit, which cost the backend as much as
 * inserting the batch's audit rows; a function is compiled once per session
 * and its query planned once.
 *
 * SQLite has one writer and needs no turn.
 */
export async function up(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  await knex.raw(`
    CREATE OR REPLACE FUNCTION tessera_audit_chain_turn(lock_key bigint, head_seq bigint, head_mac bytea) RETURNS void
    LANGUAGE plpgsql VOLATILE AS $turn$
    BEGIN
      PERFORM pg_advisory_xact_lock(lock_key);
      IF NOT EXISTS (SELECT 1 FROM (SELECT seq, mac FROM logs ORDER BY seq DESC LIMIT 1) head WHERE seq = head_seq AND mac = head_mac) THEN
        RAISE EXCEPTION 'the audit chain moved on' USING ERRCODE = 'TSS01';
      END IF;
    END
    $turn$`)
}

export async function down(knex: Knex): Promise<void> {
  if (!isPostgres(knex)) return
  await knex.raw('DROP FUNCTION IF EXISTS tessera_audit_chain_turn(bigint, bigint, bytea)')
}
