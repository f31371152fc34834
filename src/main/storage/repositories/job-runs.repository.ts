import { sql, type Db, type Tx } from '../connections'
import { sharedByInstances } from '../dialect'

export interface JobRunRow {
  name: string
  last_run_at: number
}

/** The sweeps that completed a run, with their last one. */
export async function listJobRuns(db: Db): Promise<JobRunRow[]> {
  return sql(db)('job_runs').select('name', 'last_run_at').whereNotNull('last_run_at')
}

/**
 * Takes the lease of sweep `name` until `leaseUntil` if the sweep is due at `now` (it
 * last completed `intervalMs` or more ago, or "in the future": a clock that went back) and
 * no other instance holds an unexpired lease on it. Due-ness and the lease are judged on
 * the row's latest version, under its row lock, so of instances asking at once one wins.
 * A SQLite vault has one process (the vault lock): always true, nothing written.
 */
export async function takeJobLease(tx: Tx, name: string, now: number, intervalMs: number, leaseUntil: number): Promise<boolean> {
  const db = sql(tx)
  if (!sharedByInstances(db)) return true
  const { rows } = await db.raw(
    `insert into job_runs as r (name, last_run_at, leased_until) values (?, null, ?)
     on conflict (name) do update set leased_until = excluded.leased_until
     where (r.leased_until is null or r.leased_until <= ?)
       and (r.last_run_at is null or r.last_run_at <= ? or r.last_run_at > ?)
     returning name`,
    [name, leaseUntil, now, now - intervalMs, now]
  )
  return rows.length === 1
}

/** Records a completed run of sweep `name` at `at`. */
export async function recordJobRun(db: Db, name: string, at: number): Promise<void> {
  await sql(db)('job_runs').insert({ name, last_run_at: at }).onConflict('name').merge(['last_run_at'])
}

/** Releases the lease taken until `leaseUntil` (after a run), unless it expired and another instance took it since. */
export async function releaseJobLease(db: Db, name: string, leaseUntil: number): Promise<void> {
  if (sharedByInstances(sql(db))) await sql(db)('job_runs').where({ name, leased_until: leaseUntil }).update({ leased_until: null })
}
