/** A desktop vault whose file a newer version of Tessera migrated: it stays locked and says why, and nothing in the file changes. */
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import knex from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATABASE_FILE } from '../../src/main/bootstrap/vault'
import { dispatch } from '../../src/main/desktop/dispatch'
import { createDesktopHandlers } from '../../src/main/desktop/handlers'
import { silentLogger } from '../../src/main/infra/logger'
import { SCHEMA_LEVEL } from '../../src/main/storage/migrations'
import { TestClock } from '../helpers/clock'
import { startTestDesktop, type TestDesktop } from '../helpers/desktop'

const NEWER_MIGRATION = '29990101000000_next_version'

describe('a desktop vault migrated by a newer version', () => {
  let started: TestDesktop
  const logger = silentLogger()
  const call = (channel: string, ...args: unknown[]) => dispatch(createDesktopHandlers(started.desktop), channel, args, logger)

  beforeAll(async () => {
    started = await startTestDesktop({ logger, version: '1.2.3', clock: new TestClock() })
    expect(await call('app:vault.create', { tenantName: 'Acme', keyStorage: 'key-file' })).toMatchObject({ ok: true })
    expect(await call('app:vault.lock')).toMatchObject({ ok: true })
    // What the newer version leaves in the file: a migration this one does not know.
    const file = knex({ client: 'sqlite3', connection: { filename: join(started.dataDir, DATABASE_FILE) }, useNullAsDefault: true })
    await file('knex_migrations').insert({ name: NEWER_MIGRATION, batch: 99, migration_time: new Date() })
    await file.destroy()
  })

  afterAll(() => started.dispose())

  it('stays locked, naming both schemas, and leaves the file as it was', async () => {
    const before = await stat(join(started.dataDir, DATABASE_FILE))
    const result = await call('app:vault.unlock')
    expect(result).toMatchObject({ ok: false, problem: { status: 503 } })
    const message = `The database was migrated by a newer version of Tessera (schema ${NEWER_MIGRATION.slice(0, 14)}); this version writes schema ${SCHEMA_LEVEL}. Open it with that version of Tessera or a later one.`
    expect(JSON.stringify(result)).toContain(message)
    expect(await call('app:vault.status')).toMatchObject({ ok: true, value: { state: 'locked', error: message } })
    expect((await stat(join(started.dataDir, DATABASE_FILE))).mtimeMs).toBe(before.mtimeMs)
  })
})
