/**
 * `tessera keys status|rotate|retire|rotate-master`: the key ceremonies of a
 * headless vault (docs/keys.md).
 *
 * rotate, retire and rotate-master open the vault, which locks it to this
 * process: while `tessera serve` or the desktop app holds it they are refused,
 * and the user stops the server first. A rotation's re-encryption pass runs
 * here with progress; when it is interrupted (Ctrl-C, kill -9, power loss) it
 * resumes on the next `tessera keys rotate`, or in the background as soon as
 * the server or the desktop app opens the vault. `status` only reads, so it
 * works while a server runs and shows that background pass's progress.
 */
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { userInfo } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { KeyStatus, TenantKeyStatus } from '../../shared/types'
import { CannotUnlockError, createKeyFile, generateMasterKey, loadMasterKey, replaceMasterKeyFile } from '../crypto/keys'
import { readySodium } from '../crypto/sodium'
import type { MasterKey } from '../crypto/types'
import { openDatabase } from '../db/database'
import { createLogger } from '../logger'
import { resolveDataDir } from '../paths'
import { systemClock } from '../services/context'
import { AppError } from '../services/errors'
import { createServices } from '../services/index'
import { describeCounts, type CeremonyActor } from '../services/keys.service'
import { unlockKeyring } from '../services/keyring'
import { DATABASE_FILE, openVault, type Vault } from '../services/vault'

export const KEYS_USAGE = `Usage: tessera keys <subcommand> [options]

Subcommands:
  status         Data-key versions, what each one seals, and the rotation in progress
                 --data-dir DIR  --json
  rotate         Create a new data-key version and re-encrypt everything onto it
                 (resumes an unfinished rotation instead)
                 --data-dir DIR  --batch-size N (objects per transaction, default 500)
  retire         Delete an old data-key version once nothing uses it; writes a JSON report
                 --version N (required)  --data-dir DIR  --report FILE  --json
  rotate-master  Re-wrap every key under a new master key
                 --data-dir DIR  --new-key-file FILE (required with TESSERA_MASTER_KEY)

rotate, retire and rotate-master need the vault to themselves: stop \`tessera serve\`
or the desktop app first. See docs/keys.md.`

const DEFAULT_BATCH = 500
const MAX_BATCH = 5000

/** A wrong option: exit 1 with the message. */
class UsageError extends AppError {
  constructor(message: string) {
    super(400, 'usage', message)
  }
}

function positiveInteger(value: string | undefined, option: string, max: number): number | undefined {
  if (value === undefined) return undefined
  const number = Number(value)
  if (!/^\d+$/.test(value) || number < 1 || number > max) throw new UsageError(`${option} must be a whole number from 1 to ${max}, not "${value}".`)
  return number
}

async function masterKeyOf(dataDir: string): Promise<MasterKey> {
  const masterKey = await loadMasterKey(dataDir)
  if (!masterKey) throw new CannotUnlockError(`no master key: set TESSERA_MASTER_KEY or run \`tessera init --data-dir ${dataDir}\`.`)
  return masterKey
}

/** The person at the terminal acts as the tenant OWNER; the audit message names the OS account too. */
function cliActor(vault: Vault): CeremonyActor {
  let account = 'unknown'
  try {
    account = userInfo().username
  } catch {
    // No passwd entry (some containers): the entry still names the CLI.
  }
  return { userId: vault.ownerUserId, via: `tessera CLI, OS user ${account}` }
}

/** Opens the vault for a ceremony (taking its lock), runs `work`, closes it. */
async function withVault<T>(dataDir: string, work: (vault: Vault) => Promise<T>): Promise<T> {
  const vault = await openVault({ dataDir, masterKey: await masterKeyOf(dataDir), logger: createLogger() })
  try {
    return await work(vault)
  } finally {
    await vault.close()
  }
}

function tenantOf(status: KeyStatus, tenantId: string): TenantKeyStatus {
  return status.tenants.find((tenant) => tenant.tenant_id === tenantId)!
}

function percent(done: number, total: number): string {
  return `${total === 0 ? 100 : Math.floor((100 * done) / total)}%`
}

function statusText(status: KeyStatus): string {
  const lines: string[] = []
  for (const tenant of status.tenants) {
    lines.push(`Tenant ${tenant.tenant_id}: data key version ${tenant.current_version} is current`)
    for (const version of tenant.versions) {
      const state = version.retired_at ? `retired ${version.retired_at}` : version.current ? 'current' : 'active'
      const seals = version.retired_at ? '' : `, seals ${describeCounts(version.objects)}`
      lines.push(`  v${version.version}  ${state}  created ${version.created_at}  key check ${version.key_check_value}${seals}`)
    }
    const rotation = tenant.rotation
    if (rotation && rotation.finished_at) {
      lines.push(`  Rotation to v${rotation.target_version}: finished ${rotation.finished_at} (${rotation.total} objects re-encrypted)`)
    } else if (rotation) {
      const done = Math.max(0, rotation.total - rotation.remaining)
      lines.push(`  Rotation to v${rotation.target_version}: in progress since ${rotation.started_at}, ${done} of ${rotation.total} re-encrypted (${percent(done, rotation.total)}), ${rotation.remaining} to go`)
    }
  }
  return lines.join('\n') + '\n'
}

/** Reads the key status without taking the vault's lock, so it works beside a running server. */
async function status(dataDir: string, json: boolean): Promise<void> {
  const masterKey = await masterKeyOf(dataDir)
  await readySodium()
  const file = join(dataDir, DATABASE_FILE)
  if (!existsSync(file)) throw new CannotUnlockError(`no vault in ${dataDir} (run \`tessera init\` first).`)
  const db = await openDatabase(file, { readers: 1 })
  try {
    const keyring = await unlockKeyring(db.reader, masterKey)
    const services = createServices({ db, keyring, clock: systemClock, logger: createLogger() })
    const result = await services.keys.status()
    process.stdout.write(json ? JSON.stringify(result) + '\n' : statusText(result))
  } finally {
    await db.close()
  }
}

async function rotate(dataDir: string, batch: number): Promise<void> {
  await withVault(dataDir, async (vault) => {
    const { keys } = vault.services
    let tenant = tenantOf(await keys.status(), vault.tenantId)
    if (tenant.rotation && !tenant.rotation.finished_at) {
      process.stdout.write(`Resuming the unfinished rotation to data key version ${tenant.rotation.target_version} (${tenant.rotation.remaining} objects to go).\n`)
    } else {
      tenant = await keys.rotate(cliActor(vault), vault.tenantId)
      process.stdout.write(`Data key version ${tenant.current_version} created; new writes use it from now on.\n`)
    }
    const { target_version: target, total } = tenant.rotation!
    let done = total - tenant.rotation!.remaining
    for (;;) {
      const moved = await keys.reencrypt(batch)
      done += moved
      if (moved > 0) process.stdout.write(`Re-encrypting onto version ${target}: ${done} of ${total} (${percent(done, total)})\n`)
      if (moved < batch) {
        tenant = tenantOf(await keys.status(), vault.tenantId)
        if (tenant.rotation!.finished_at) break
        if (moved === 0) throw new AppError(500, 'stalled', 'The re-encryption made no progress; run `tessera keys status` and retry.')
      }
    }
    const older = tenant.versions.filter((version) => !version.retired_at && version.version !== target).map((version) => version.version)
    process.stdout.write(`Re-encryption finished: every sealed object is on data key version ${target}.\n`)
    for (const version of older) process.stdout.write(`Retire version ${version} once it is no longer needed: tessera keys retire --version ${version}\n`)
  })
}

async function retire(dataDir: string, version: number, reportFile: string | undefined, json: boolean): Promise<void> {
  await withVault(dataDir, async (vault) => {
    const report = await vault.services.keys.retire(cliActor(vault), vault.tenantId, version)
    const path = resolve(reportFile ?? join(dataDir, `key-retirement-v${version}-${report.retired_at.replace(/[:.]/g, '-')}.json`))
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, JSON.stringify(report, null, 2) + '\n', { mode: 0o600 })
    if (json) process.stdout.write(JSON.stringify(report) + '\n')
    else process.stdout.write(`Data key version ${version} retired; its key is deleted. Report: ${path}\n`)
  })
}

async function rotateMaster(dataDir: string, newKeyFile: string | undefined): Promise<void> {
  const fromEnvironment = Boolean(process.env.TESSERA_MASTER_KEY)
  if (fromEnvironment && !newKeyFile) {
    throw new UsageError('the master key comes from TESSERA_MASTER_KEY: give --new-key-file FILE, where the new key is written (mode 0600) before the vault switches to it.')
  }
  if (!fromEnvironment && newKeyFile) throw new UsageError('--new-key-file is only for a master key in TESSERA_MASTER_KEY; master.key is replaced in place.')
  const target = newKeyFile && resolve(newKeyFile)
  if (target && existsSync(target)) throw new UsageError(`${target} already exists; give a new file.`)
  await withVault(dataDir, async (vault) => {
    const store = (key: MasterKey) => (target ? createKeyFile(target, key) : replaceMasterKeyFile(dataDir, key))
    const result = await vault.services.keys.rotateMaster(cliActor(vault), generateMasterKey(), store)
    const lines = [`Master key rotated; new key check value ${result.key_check_value}.`]
    if (target) {
      lines.push(`The new master key is in ${target}. Put its content into TESSERA_MASTER_KEY now: the old key no longer opens this vault.`)
      lines.push(`Then back it up and delete ${target}.`)
    } else {
      lines.push(`${join(dataDir, 'master.key')} holds the new key. Back it up, and destroy every copy of the old key.`)
    }
    process.stdout.write(lines.join('\n') + '\n')
  })
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options']

/** The options each subcommand takes besides --data-dir; anything else is refused. */
const SUBCOMMAND_OPTIONS: Record<string, Options> = {
  status: { json: { type: 'boolean' } },
  rotate: { 'batch-size': { type: 'string' } },
  retire: { version: { type: 'string' }, report: { type: 'string' }, json: { type: 'boolean' } },
  'rotate-master': { 'new-key-file': { type: 'string' } }
}

/** `tessera keys …`. */
export async function keys(argv: string[]): Promise<void> {
  const [subcommand, ...rest] = argv
  if (!subcommand || subcommand === '--help' || subcommand === '-h' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(KEYS_USAGE + '\n')
    if (!subcommand) throw new UsageError('name a subcommand.')
    return
  }
  const options = SUBCOMMAND_OPTIONS[subcommand]
  if (!options) throw new UsageError(`unknown subcommand "${subcommand}"; use status, rotate, retire or rotate-master.`)
  const { values } = parseArgs({ args: rest, options: { 'data-dir': { type: 'string' }, ...options } })
  const text = (name: string) => (values as Record<string, string | undefined>)[name]
  const json = (values as Record<string, boolean | undefined>).json === true
  const dataDir = resolveDataDir(text('data-dir'))
  switch (subcommand) {
    case 'status':
      return status(dataDir, json)
    case 'rotate':
      return rotate(dataDir, positiveInteger(text('batch-size'), '--batch-size', MAX_BATCH) ?? DEFAULT_BATCH)
    case 'retire': {
      const version = positiveInteger(text('version'), '--version', 2 ** 31 - 1)
      if (version === undefined) throw new UsageError('--version N is required: the data-key version to retire (see `tessera keys status`).')
      return retire(dataDir, version, text('report'), json)
    }
    default:
      return rotateMaster(dataDir, text('new-key-file'))
  }
}
