/**
 * The headless `tessera` command. Other tools drive Tessera through it, so
 * its output and exit codes are a contract (docs/cli.md). The commands and
 * their options are in commands.ts; the exit codes in exit-codes.ts.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { commandUsage, groupUsage, mainUsage, parseCommandLine } from './command-line'
import { commandGroup, commandOf, type CommandSpec } from './commands'
import { CliError, exitCode } from './exit-codes'

function version(): string {
  return (JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string }).version
}

/** Prints the failure as "tessera <command>: cause", "hint: fix" (and the usage for a bad command line); returns its exit code. */
function report(error: unknown, command: CommandSpec | undefined): number {
  // Loaded only on failure (with `require`, as commands are): the error classes it knows pull in the whole vault.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { toCliError } = require('./failures') as typeof import('./failures')
  const failure = toCliError(error)
  const lines = [`tessera${command ? ` ${command.name}` : ''}: ${failure.message}`]
  if (failure.hint) lines.push(`hint: ${failure.hint}`)
  if (failure.showUsage) lines.push('', command ? commandUsage(command) : mainUsage(false))
  process.stderr.write(lines.join('\n') + '\n')
  return exitCode(failure.exit)
}

function help(topic: string[]): number {
  if (topic.length === 0) {
    process.stdout.write(mainUsage(true) + '\n')
    return exitCode('OK')
  }
  if (topic.length === 1 && commandGroup(topic[0]).length > 0) {
    process.stdout.write(groupUsage(topic[0]) + '\n')
    return exitCode('OK')
  }
  const command = commandOf(topic)?.command
  if (!command) throw new CliError('USAGE', `Unknown command ${JSON.stringify(topic.join(' '))}.`, 'run `tessera --help` for the list of commands.', true)
  process.stdout.write(commandUsage(command) + '\n')
  return exitCode('OK')
}

/** Runs `tessera argv…` and resolves with its exit code; `serve` resolves once listening and keeps running. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  let command: CommandSpec | undefined
  try {
    if (first === undefined) throw new CliError('USAGE', 'Missing command.', 'run `tessera --help` for the commands, options, environment and exit codes.', true)
    if (first === '-h' || first === '--help' || first === 'help') return help(rest)
    if (first === '-v' || first === '--version') {
      process.stdout.write(version() + '\n')
      return exitCode('OK')
    }
    const found = commandOf(argv)
    if (!found && commandGroup(first).length > 0) {
      const [subcommand] = rest
      if (subcommand === undefined || subcommand === '-h' || subcommand === '--help') {
        ;(subcommand === undefined ? process.stderr : process.stdout).write(groupUsage(first) + '\n')
        return exitCode(subcommand === undefined ? 'USAGE' : 'OK')
      }
      throw new CliError('USAGE', `Unknown command ${JSON.stringify(`${first} ${subcommand}`)}.`, `run \`tessera ${first} --help\` for its commands.`)
    }
    if (!found) {
      const what = first.startsWith('-') ? `Unknown option ${first}` : `Unknown command ${JSON.stringify(first)}`
      throw new CliError('USAGE', `${what}.`, 'run `tessera --help` for the list of commands.', true)
    }
    command = found.command
    const input = parseCommandLine(command, found.rest)
    if (!input) {
      process.stdout.write(commandUsage(command) + '\n')
      return exitCode('OK')
    }
    return (await command.run(input)) ?? exitCode('OK')
  } catch (error) {
    return report(error, command)
  }
}

// A failure after startup (in a running `serve`) still gets one line, not a stack trace.
process.on('uncaughtException', (error) => {
  process.stderr.write(`tessera: unexpected error (${error.name}).\nhint: this is likely a bug in Tessera: report it with the command you ran and this message.\n`)
  process.exit(exitCode('UNEXPECTED'))
})

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
