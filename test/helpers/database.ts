/** A database with the whole schema in a temporary folder, for the storage tests. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { openDatabase, type Database } from '../../src/main/storage/database'

export interface TemporaryDatabase {
  db: Database
  /** Closes the database and removes its folder. */
  dispose(): Promise<void>
}

export async function openTemporaryDatabase(prefix: string): Promise<TemporaryDatabase> {
  const dir = await mkdtemp(join(tmpdir(), `tessera-${prefix}-`))
  const db = await openDatabase(join(dir, 'tessera.db'))
  return {
    db,
    async dispose() {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}

/**
 * Opens a temporary database before the file's tests (before each test with
 * `each`) and disposes of it after them; `db` is the one currently open.
 */
export function useTemporaryDatabase(prefix: string, { each = false } = {}): { readonly db: Database } {
  let temporary: TemporaryDatabase | undefined
  ;(each ? beforeEach : beforeAll)(async () => {
    temporary = await openTemporaryDatabase(prefix)
  })
  ;(each ? afterEach : afterAll)(() => temporary!.dispose())
  return {
    get db() {
      return temporary!.db
    }
  }
}
