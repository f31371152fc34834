/**
 * One process at a time holds a vault: the desktop app, `tessera serve`, or
 * `tessera init` while it creates one. The services keep in-memory caches
 * that only their own writes keep exact.
 *
 * The lock is two files in the data directory:
 * - `tessera.lock.db` is held with an exclusive SQLite transaction for as
 *   long as the owner runs. SQLite takes an OS file lock (fcntl on POSIX,
 *   LockFileEx on Windows), which the OS drops when the process ends, however
 *   it ends (kill -9, crash, power cut): a dead owner never blocks anyone, and
 *   of two processes starting at once exactly one gets it.
 * - `tessera.lock` is a JSON record of the owner (process id, kind, start
 *   time, URL once listening) for refusals and `tessera status`/`stop`. Only
 *   the holder of the OS lock writes it, and it is removed on release; after a
 *   crash it names a process that no longer runs, which readers recognise.
 */
import { existsSync } from 'node:fs'
import { readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import sqlite3 from 'sqlite3'
import { z } from 'zod'
import { renameOrRemove, temporaryBeside, writeNewPrivateFile } from './private-files'
import { isProcessRunning, processStartTime } from './processes'

const LOCK_FILE = 'tessera.lock'
const LOCK_DB_FILE = 'tessera.lock.db'

const lockKinds = ['serve', 'desktop', 'init'] as const
export type LockKind = (typeof lockKinds)[number]

const ownerSchema = z.object({
  pid: z.number().int().positive(),
  kind: z.enum(lockKinds),
  /** When the owner took the lock (ISO 8601). */
  started_at: z.string(),
  /** The owner's process start time where the OS tells it (Linux), so a reused process id is not mistaken for it. */
  process_start: z.string().optional(),
  /** Where it serves REST, once listening. */
  url: z.string().optional()
})

/** The owner of a vault's lock, as `tessera.lock` records it. */
export type LockOwner = z.infer<typeof ownerSchema>

/** A held vault lock. */
export interface VaultLock {
  /** Records the URL the owner serves on (for `tessera status` and refusals). */
  recordUrl(url: string): Promise<void>
  /** Removes the record and lets go of the OS lock; safe to call twice. */
  release(): Promise<void>
}

/** "`tessera serve` (process 4242, http://127.0.0.1:4390)". */
export function describeOwner(owner: LockOwner | undefined): string {
  if (!owner) return 'another Tessera process'
  const who = { serve: '`tessera serve`', desktop: 'the Tessera desktop app', init: '`tessera init`' }[owner.kind]
  return `${who} (process ${owner.pid}${owner.url ? `, ${owner.url}` : ''})`
}

/** Another live process holds the vault. */
export class VaultInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner | undefined
  ) {
    super(`The vault in ${dataDir} is in use by ${describeOwner(owner)}.`)
    this.name = 'VaultInUseError'
  }
}

/** The recorded owner, whether or not it still runs; undefined when there is no readable record. */
export async function readLockOwner(dataDir: string): Promise<LockOwner | undefined> {
  try {
    return ownerSchema.parse(JSON.parse(await readFile(join(dataDir, LOCK_FILE), 'utf8')))
  } catch {
    // Missing, or unreadable after a power cut: either way it names no one.
    return undefined
  }
}

/**
 * The recorded owner if that very process still runs. Where the OS tells
 * process start times (Linux), a record without one proves nothing and names no one.
 */
export async function runningOwner(dataDir: string): Promise<LockOwner | undefined> {
  const owner = await readLockOwner(dataDir)
  if (!owner || (owner.process_start === undefined && processStartTime(process.pid) !== undefined)) return undefined
  return isProcessRunning(owner.pid, owner.process_start) ? owner : undefined
}

/** Who holds a vault, for `tessera status` and `stop`. */
export type VaultHolder = { held: false } | { held: true; owner: LockOwner | undefined }

/**
 * Whether a process holds the vault's OS lock, and the live owner its record
 * names. The record alone (left by a crash, or written by anyone who could
 * write the directory) never makes a process the holder: the lock is tried first.
 */
export async function vaultHolder(dataDir: string): Promise<VaultHolder> {
  const file = join(dataDir, LOCK_DB_FILE)
  // Nobody has ever held a vault without this file.
  if (!existsSync(file)) return { held: false }
  const taken = await holdOsLock(file)
  if (taken) {
    await closeDatabase(taken)
    return { held: false }
  }
  return { held: true, owner: await runningOwner(dataDir) }
}

/** A busy lock whose record names no live process belongs to one starting or exiting right now: look again a few times. */
const ATTEMPTS = 20
const RETRY_MS = 50

/**
 * Takes the vault's lock for this process.
 * @throws VaultInUseError naming the live owner
 */
export async function acquireVaultLock(dataDir: string, kind: LockKind): Promise<VaultLock> {
  for (let attempt = 1; ; attempt++) {
    const held = await holdOsLock(join(dataDir, LOCK_DB_FILE))
    if (held) return claim(dataDir, kind, held)
    const owner = await runningOwner(dataDir)
    if (owner || attempt === ATTEMPTS) throw new VaultInUseError(dataDir, owner)
    await sleep(RETRY_MS)
  }
}

async function claim(dataDir: string, kind: LockKind, held: sqlite3.Database): Promise<VaultLock> {
  const owner: LockOwner = { pid: process.pid, kind, started_at: new Date().toISOString(), process_start: processStartTime(process.pid) }
  let released: Promise<void> | undefined
  const release = () =>
    (released ??= (async () => {
      // The record goes first: once the OS lock is free, a new owner may write its own.
      await unlink(join(dataDir, LOCK_FILE)).catch(() => undefined)
      await closeDatabase(held)
    })())
  try {
    await writeOwner(dataDir, owner)
  } catch (error) {
    await release()
    throw error
  }
  return {
    async recordUrl(url) {
      owner.url = url
      await writeOwner(dataDir, owner)
    },
    release
  }
}

/** Replaces the record in one step, so a reader never sees half of it. */
async function writeOwner(dataDir: string, owner: LockOwner): Promise<void> {
  const path = join(dataDir, LOCK_FILE)
  const temporary = temporaryBeside(path)
  await writeNewPrivateFile(temporary, JSON.stringify(owner) + '\n')
  await renameOrRemove(temporary, path)
}

/** The open lock database inside its exclusive transaction, or undefined when another connection holds it. */
async function holdOsLock(file: string): Promise<sqlite3.Database | undefined> {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const opened = new sqlite3.Database(file, (error) => (error ? reject(error) : resolve(opened)))
  })
  try {
    await new Promise<void>((resolve, reject) => db.exec('BEGIN EXCLUSIVE', (error) => (error ? reject(error) : resolve())))
    return db
  } catch (error) {
    await closeDatabase(db)
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined
    throw error
  }
}

/** Closing rolls back the open transaction, which frees the OS lock. */
function closeDatabase(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()))
}
