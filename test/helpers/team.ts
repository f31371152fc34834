/**
 * A team vault for the two-instance suites: a fresh PostgreSQL database,
 * `tessera init` in the first data directory, its master key copied to the
 * others, and one `tessera serve` per directory on that database.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run, serve, terminate, type Served } from './cli'
import { createTestDatabase } from './postgres'

export interface TeamVault {
  databaseUrl: string
  /** One data directory per instance; the first holds the vault's `init`. */
  dirs: string[]
  instances: Served[]
  /** The management application's key `init` printed. */
  managementKey: string
  /** Starts one more instance on `dir` (e.g. a killed one again); `close` stops it too. */
  serveAgain(dir: string): Promise<Served>
  /** Stops every instance, then drops the database and the directories. */
  close(): Promise<void>
}

export async function startTeamVault(instanceCount = 2, env: Record<string, string> = { TESSERA_LOG_LEVEL: 'warn' }): Promise<TeamVault> {
  const database = await createTestDatabase()
  const dirs = await Promise.all(Array.from({ length: instanceCount }, () => mkdtemp(join(tmpdir(), 'tessera-team-'))))
  const init = await run(['init', '--data-dir', dirs[0], '--database-url', database.url, '--json'])
  const managementKey = (JSON.parse(init.stdout) as { application: { key: string } }).application.key
  await Promise.all(dirs.slice(1).map((dir) => copyFile(join(dirs[0], 'master.key'), join(dir, 'master.key'))))
  const serveOn = (dir: string) => serve(dir, { TESSERA_DATABASE_URL: database.url, ...env })
  const instances = await Promise.all(dirs.map(serveOn))
  const extra: Served[] = []
  return {
    databaseUrl: database.url,
    dirs,
    instances,
    managementKey,
    async serveAgain(dir) {
      const server = await serveOn(dir)
      extra.push(server)
      return server
    },
    async close() {
      await Promise.all([...instances, ...extra].map(terminate))
      await database.drop()
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
    }
  }
}
