/**
 * `npm run bench -- --engine postgres`: the databases of a PostgreSQL run and
 * the server's CPU for PostgreSQL itself. Tessera's work on a team vault is
 * split between its own process and the PostgreSQL backend serving it, so
 * both go on the server core (as does the backend of the raw ceiling): the
 * load generator keeps its own core, as in a SQLite run.
 *
 * BENCH_POSTGRES: a server and a database to connect to for creating the run's
 * databases (default postgres://postgres@127.0.0.1:5432/test).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import knex from 'knex'
import { LOAD_CPU, SERVER_CPU } from './children'

const ADMIN_URL = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test'

async function admin(statement: string): Promise<void> {
  const db = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } })
  try {
    await db.raw(statement)
  } finally {
    await db.destroy()
  }
}

/** A new empty database for this run; `drop` removes it. */
export async function benchDatabase(purpose: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `tessera_bench_${purpose}_${process.pid}`
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** The PostgreSQL server's processes (postmaster, backends, helpers), when it runs on this machine. */
function postgresPids(): string[] {
  const result = spawnSync('pgrep', ['-f', '^postgres|/postgres '], { encoding: 'utf8' })
  return result.status === 0 ? result.stdout.split('\n').filter(Boolean) : []
}

/**
 * Pins PostgreSQL (every process, and the backends it forks from now on) to the
 * server core; returns how to give it every core back. Does nothing unpinned.
 */
export function pinPostgres(pinned: boolean): { summary: string; release(): void } {
  const pids = pinned ? postgresPids() : []
  const pin = (cpus: string) => pids.forEach((pid) => spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, pid], { stdio: 'ignore' }))
  if (pids.length === 0) return { summary: 'PostgreSQL not pinned', release: () => undefined }
  pin(String(SERVER_CPU))
  const all = execFileSync('nproc', ['--all']).toString().trim()
  return {
    summary: `PostgreSQL (${pids.length} processes) pinned with the server to CPU ${SERVER_CPU}, load generator on CPU ${LOAD_CPU}`,
    release: () => pin(`0-${Number(all) - 1}`)
  }
}
