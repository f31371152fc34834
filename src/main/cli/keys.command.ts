/**
 * `tessera keys status|rotate|retire|rotate-master`: the key ceremonies of a
 * headless vault (docs/keys.md).
 *
 * rotate, retire and rotate-master open the vault, which locks a file vault
 * to this process: while `tessera serve` or the desktop app holds it they are
 * refused, and the user stops the server first. A team vault has no lock: its
 * servers keep serving and hear of the new keys (app/change-follower.ts). A rotation's re-encryption pass runs
 * here with progress; when it is interrupted (Ctrl-C, kill -9, power loss) it
 * resumes on the next `tessera keys rotate`, or in the background as soon as
 * the server or the desktop app opens the vault. `status` only reads, so it
 * works while a server runs and shows that background pass's progress.
 */
import { access, constants, mkdir, stat } from 'node:fs/promises'
import { userInfo } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import type { KeyStatus, TenantKeyStatus } from '../../shared/types'
import { createKeyFile, generateMasterKey, replaceMasterKeyFile, type MasterKey } from '../bootstrap/master-key'
import { describeCounts, type CeremonyActor } from '../app/keys.service'
import type { Vault } from '../bootstrap/vault'
import type { CommandInput } from './commands'
import { writeNewPrivateFile } from '../infra/private-files'
import { ConflictError, NotFoundError } from '../app'
import { CliError } from './exit-codes'
import { pathProblem, somethingAt } from './path-problems'
import { placeOf, withOpenVault, withUnlockedVault } from './vault-access'


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

/** `tessera keys status`: reads without taking the vault's lock, so it works beside a running server. */
export async function keysStatus({ options }: CommandInput): Promise<void> {
  await withUnlockedVault(placeOf(options), async (vault) => {
    const result = await vault.keyStatus()
    process.stdout.write(options.json ? JSON.stringify(result) + '\n' : statusText(result))
  })
}

/** `tessera keys rotate`: a new data-key version, then the re-encryption pass with progress (or the unfinished pass, resumed). */
export async function keysRotate({ options }: CommandInput): Promise<void> {
  const batch = options['batch-size'] as number
  await withOpenVault(placeOf(options), async (vault) => {
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
        if (moved === 0) throw new CliError('UNEXPECTED', 'The re-encryption made no progress.', 'run `tessera keys status` and retry.')
      }
    }
    const older = tenant.versions.filter((version) => !version.retired_at && version.version !== target).map((version) => version.version)
    process.stdout.write(`Re-encryption finished: every sealed object is on data key version ${target}.\n`)
    for (const version of older) process.stdout.write(`Retire version ${version} once it is no longer needed: tessera keys retire --version ${version}\n`)
  })
}

/**
 * Where `keys retire --report` will write, checked before anything is retired:
 * a new file (never replacing one), its folders created.
 * @throws CliError (USAGE)
 */
async function reportTarget(reportFile: string): Promise<string> {
  const path = resolve(reportFile)
  // Only a path that does not exist will do: any other failure to look it up (too long a name, a loop of links) would fail the write too.
  if (await somethingAt(path, '--report')) throw new CliError('USAGE', `${path} already exists.`, 'give --report a new file name: a retirement report never replaces a file.')
  await mkdir(dirname(path), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST' || error.code === 'ENOTDIR') throw new CliError('USAGE', `Cannot write ${path}: a file is in the way of its folder.`, 'give --report a file in a folder.')
    throw pathProblem(error, path, '--report') ?? error
  })
  // A folder this user may not write to (EACCES, EROFS) is refused too, as a permission.
  await access(dirname(path), constants.W_OK)
  return path
}

const STATUS = '`tessera keys status` (with the same --data-dir or --database-url)'

/** A retirement the vault refused, with what to do about it; any other error as it is. */
function retireRefusal(error: unknown): unknown {
  if (error instanceof NotFoundError) return new CliError('REFUSED', error.message, `${STATUS} lists the vault's data-key versions: give --version one of them.`)
  if (error instanceof ConflictError) {
    return new CliError(
      'REFUSED',
      error.message,
      `${STATUS} shows which version is current, what each one seals and which are retired: a version can be retired once another one is current (\`tessera keys rotate\` makes one and moves the data onto it) and it seals nothing.`
    )
  }
  return error
}

/** `tessera keys retire`: deletes a data-key version nothing uses and writes the report that proves it. */
export async function keysRetire({ options }: CommandInput): Promise<void> {
  const dataDir = options['data-dir'] as string
  const version = options.version as number | undefined
  if (version === undefined) throw new CliError('USAGE', '--version N is required: the data-key version to retire.', 'see `tessera keys status` for the versions.', true)
  const chosen = options.report === undefined ? undefined : await reportTarget(options.report as string)
  await withOpenVault(placeOf(options), async (vault) => {
    const report = await vault.services.keys.retire(cliActor(vault), vault.tenantId, version).catch((error: unknown) => {
      throw retireRefusal(error)
    })
    const path = chosen ?? join(resolve(dataDir), `key-retirement-v${version}-${report.retired_at.replace(/[:.]/g, '-')}.json`)
    const text = JSON.stringify(report, null, 2) + '\n'
    try {
      await writeNewPrivateFile(path, text)
    } catch (error) {
      // The key is gone already: hand the report over on stdout rather than lose it.
      process.stdout.write(text)
      const cause = (error as NodeJS.ErrnoException).code ?? 'unknown error'
      throw new CliError('REPORT_NOT_WRITTEN', `Data key version ${version} retired; its key is deleted. Report not written: cannot write ${path} (${cause}); it is printed on stdout instead.`, 'keep the printed report; the vault keeps a copy too (the desktop app shows it with Report).')
    }
    if (options.json) process.stdout.write(JSON.stringify(report) + '\n')
    else process.stdout.write(`Data key version ${version} retired; its key is deleted. Report: ${path}\n`)
  })
}

/**
 * Where `rotate-master --new-key-file` will write, checked before the vault
 * changes: a new file (not even a symlink there) in an existing folder.
 * @throws CliError (USAGE)
 */
async function newKeyFileTarget(newKeyFile: string): Promise<string> {
  const target = resolve(newKeyFile)
  if (await somethingAt(target, '--new-key-file')) throw new CliError('USAGE', `${target} already exists.`, 'give --new-key-file a file that does not exist yet.')
  const folder = await stat(dirname(target)).catch(() => undefined)
  if (!folder?.isDirectory()) throw new CliError('USAGE', `Cannot write ${target}: its folder does not exist.`, 'give --new-key-file a new file in an existing folder.')
  return target
}

/** `tessera keys rotate-master`: re-wraps every key under a new master key, stored where the current one is. */
export async function keysRotateMaster({ options }: CommandInput): Promise<void> {
  const dataDir = options['data-dir'] as string
  const newKeyFile = options['new-key-file'] as string | undefined
  const fromEnvironment = Boolean(process.env.TESSERA_MASTER_KEY)
  if (fromEnvironment && !newKeyFile) {
    throw new CliError('USAGE', 'The master key comes from TESSERA_MASTER_KEY.', 'give --new-key-file FILE: the new key is written there (mode 0600) before the vault switches to it.')
  }
  if (!fromEnvironment && newKeyFile) throw new CliError('USAGE', '--new-key-file is only for a master key in TESSERA_MASTER_KEY.', 'leave it out: master.key is replaced in place.')
  const target = newKeyFile && (await newKeyFileTarget(newKeyFile))
  await withOpenVault(placeOf(options), async (vault) => {
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
