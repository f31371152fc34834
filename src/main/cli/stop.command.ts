/**
 * `tessera stop`: asks the Tessera process holding the vault to shut down
 * (SIGTERM: it stops accepting connections, finishes its requests, closes the
 * vault) and waits until it has exited.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { isProcessRunning } from '../infra/processes'
import { describeOwner, vaultHolder } from '../infra/vault-lock'
import type { CommandInput } from './commands'
import { requireDataDir } from './data-dir'
import { CliError } from './exit-codes'

const POLL_MS = 100

export async function stop({ options }: CommandInput): Promise<void> {
  const dataDir = options['data-dir'] as string
  const timeoutSeconds = options.timeout as number
  await requireDataDir(dataDir, 'read')
  // Only the holder of the OS lock is signalled, named by the lock's record with its start time: a process that merely reuses the id never is.
  const holder = await vaultHolder(dataDir)
  if (!holder.held) {
    throw new CliError('NOT_RUNNING', `No Tessera process holds ${dataDir}; nothing to stop.`, 'if a server runs, it serves another data directory: give `tessera stop` its --data-dir (or TESSERA_DATA_DIR), as the server was started with.')
  }
  const owner = holder.owner
  if (!owner) {
    throw new CliError('IN_USE', `A process holds ${dataDir}, but the vault's lock record does not name it; nothing was signalled.`, 'it may be starting or exiting: run `tessera status` or `tessera stop` again in a moment.')
  }
  try {
    process.kill(owner.pid, 'SIGTERM')
  } catch (error) {
    // ESRCH: it exited on its own meanwhile.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return void process.stdout.write(`${describeOwner(owner)} has exited.\n`)
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error
    throw new CliError('PERMISSION_DENIED', `Not allowed to stop process ${owner.pid}: it belongs to another user.`, 'run `tessera stop` as the user that started it.')
  }
  const deadline = Date.now() + timeoutSeconds * 1000
  while (isProcessRunning(owner.pid, owner.process_start)) {
    if (Date.now() >= deadline) {
      throw new CliError(
        'STOP_TIMEOUT',
        `${describeOwner(owner)} did not exit within ${timeoutSeconds} s; it may still be finishing requests.`,
        `run \`tessera stop\` again to keep waiting (or pass a longer --timeout); \`kill -9 ${owner.pid}\` ends it at once, and the vault's lock is released when it exits.`
      )
    }
    await sleep(POLL_MS)
  }
  process.stdout.write(`Stopped ${describeOwner(owner)}.\n`)
}
