/**
 * `tessera status`: whether a Tessera process (serve, the desktop app, or an
 * init in progress) holds the vault in the data directory, with its process
 * id and URL, as its lock records them.
 */
import { describeOwner, vaultHolder } from '../infra/vault-lock'
import type { CommandInput } from './commands'
import { requireDataDir } from './data-dir'
import { exitCode, type ExitCode } from './exit-codes'

export async function status({ options }: CommandInput): Promise<ExitCode> {
  const dataDir = options['data-dir'] as string
  await requireDataDir(dataDir, 'read')
  const holder = await vaultHolder(dataDir)
  const owner = holder.held ? holder.owner : undefined
  if (options.json) {
    const running = owner
      ? { running: true, pid: owner.pid, kind: owner.kind, url: owner.url ?? null, started_at: owner.started_at }
      : holder.held
        ? { running: true, pid: null, kind: null, url: null, started_at: null }
        : { running: false }
    process.stdout.write(JSON.stringify({ data_dir: dataDir, ...running }) + '\n')
  } else if (owner) {
    process.stdout.write(`Running: ${describeOwner(owner)}, on ${dataDir} since ${owner.started_at}.\n`)
  } else {
    // Held but not named: a process starting or exiting right now.
    process.stdout.write(holder.held ? `Running: a process holds ${dataDir}, but the vault's lock record does not name it.\n` : `Not running: no Tessera process holds ${dataDir}.\n`)
  }
  return exitCode(holder.held ? 'OK' : 'NOT_RUNNING')
}
