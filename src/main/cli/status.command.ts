/**
 * `tessera status`: whether a Tessera process (serve, the desktop app, or an
 * init in progress) holds the vault in the data directory, with its process
 * id and URL, as its lock records them.
 */
import { describeOwner, runningOwner } from '../infra/vault-lock'
import type { CommandInput } from './commands'
import { requireDataDir } from './data-dir'
import { exitCode, type ExitCode } from './exit-codes'

export async function status({ options }: CommandInput): Promise<ExitCode> {
  const dataDir = options['data-dir'] as string
  await requireDataDir(dataDir, 'read')
  const owner = await runningOwner(dataDir)
  if (options.json) {
    const running = owner ? { running: true, pid: owner.pid, kind: owner.kind, url: owner.url ?? null, started_at: owner.started_at } : { running: false }
    process.stdout.write(JSON.stringify({ data_dir: dataDir, ...running }) + '\n')
  } else {
    process.stdout.write(owner ? `Running: ${describeOwner(owner)}, on ${dataDir} since ${owner.started_at}.\n` : `Not running: no Tessera process holds ${dataDir}.\n`)
  }
  return exitCode(owner ? 'OK' : 'NOT_RUNNING')
}
