/**
 * Reads a command's arguments against its table entry (commands.ts) and
 * writes the usage text from the same entry.
 */
import { parseArgs } from 'node:util'
import { COMMANDS, commandGroup, type CommandInput, type CommandSpec, type OptionSpec } from './commands'
import { ENV_NAMES, ENVIRONMENT_HELP, readEnvironment, type EnvName } from './environment'
import { CliError, EXIT_CODES } from './exit-codes'

/** Why an argument cannot be read, with the command's usage after it. */
function usageError(command: CommandSpec, message: string): CliError {
  return new CliError('USAGE', message, `see \`tessera ${command.name} --help\`.`, true)
}

/** The values typed on the command line, by option name; undefined when `--help`/`-h` is among them. */
function readArguments(command: CommandSpec, argv: string[]): Map<string, string | true> | undefined {
  const options = Object.fromEntries(command.options.map((option) => [option.name, { type: option.value ? ('string' as const) : ('boolean' as const) }]))
  const { tokens } = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: false, allowPositionals: true, tokens: true })
  if (tokens.some((token) => token.kind === 'option' && token.name === 'help')) return undefined
  const given = new Map<string, string | true>()
  for (const token of tokens) {
    if (token.kind === 'positional') throw usageError(command, `Unexpected argument ${JSON.stringify(token.value)}.`)
    if (token.kind !== 'option') continue
    const option = command.options.find((candidate) => candidate.name === token.name)
    if (!option) throw usageError(command, `Unknown option ${token.rawName}.`)
    if (!option.value) {
      if (token.inlineValue) throw usageError(command, `${token.rawName} takes no value.`)
      given.set(option.name, true)
    } else if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      throw usageError(command, `${token.rawName} needs a value (${option.value}).`)
    } else {
      given.set(option.name, token.value)
    }
  }
  return given
}

function parseOption(command: CommandSpec, option: OptionSpec, value: string): unknown {
  if (!option.schema) return value
  const result = option.schema.safeParse(value)
  if (result.success) return result.data
  const got = option.secret ? '' : ` (got ${JSON.stringify(value)})`
  throw new CliError('USAGE', `--${option.name} ${result.error.issues[0].message}${got}.`, `see \`tessera ${command.name} --help\`.`)
}

/** The variables a command reads: its own and those of its options. */
export function commandEnvironment(command: CommandSpec): EnvName[] {
  return [...command.options.flatMap((option) => (option.env ? [option.env] : [])), ...command.env]
}

/**
 * The validated input of `command`, or undefined when help was asked for.
 * Option values win over their variables, which win over defaults.
 * @throws CliError (USAGE) naming the option or variable at fault
 */
export function parseCommandLine(command: CommandSpec, argv: string[], processEnv: NodeJS.ProcessEnv = process.env): CommandInput | undefined {
  const given = readArguments(command, argv)
  if (!given) return undefined
  const values = new Map<string, unknown>()
  for (const [name, value] of given) {
    const option = command.options.find((candidate) => candidate.name === name)!
    values.set(name, value === true ? true : parseOption(command, option, value))
  }
  const env = readEnvironment(commandEnvironment(command), processEnv)
  const sources = new Map<string, string>()
  for (const option of command.options) {
    if (values.has(option.name)) sources.set(option.name, `--${option.name}`)
    else if (option.env && env[option.env] !== undefined) {
      values.set(option.name, env[option.env])
      sources.set(option.name, option.env)
    } else {
      values.set(option.name, option.default === undefined ? (option.value ? undefined : false) : parseOption(command, option, option.default))
      sources.set(option.name, 'the default')
    }
  }
  return { options: Object.fromEntries(values), env, sourceOf: (name) => sources.get(name) ?? name }
}

/** Breaks `text` into lines of at most `width` characters, between words. */
function wrap(text: string, width = 100): string {
  const lines = ['']
  for (const word of text.split(' ')) {
    const last = lines.length - 1
    if (lines[last] && lines[last].length + word.length + 1 > width) lines.push(word)
    else lines[last] = lines[last] ? `${lines[last]} ${word}` : word
  }
  return lines.join('\n')
}

/** Two columns, the first padded to its widest cell. */
function columns(rows: [string, string][], indent = '  '): string {
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`).join('\n')
}

function optionRow(option: OptionSpec): [string, string] {
  const notes = [option.env && `env ${option.env}`, option.default !== undefined && `default: ${option.default}`].filter(Boolean)
  return [`--${option.name}${option.value ? ` ${option.value}` : ''}`, `${option.description}${notes.length ? ` (${notes.join('; ')})` : ''}`]
}

/** `tessera serve [--data-dir DIR] [--host HOST] [--port PORT]` */
export function synopsis(command: CommandSpec): string {
  return [`tessera ${command.name}`, ...command.options.map((option) => `[--${option.name}${option.value ? ` ${option.value}` : ''}]`)].join(' ')
}

/** The help of one command. */
export function commandUsage(command: CommandSpec): string {
  const variables = command.env.length ? `\n\n${wrap(`Also reads: ${command.env.join(', ')} (see \`tessera --help\`).`)}` : ''
  return (
    `Usage: ${synopsis(command)}\n\n${command.summary}.` +
    (command.details ? `\n${command.details}` : '') +
    `\n\nOptions:\n${columns([...command.options.map(optionRow), ['-h, --help', 'show this help']])}` +
    variables
  )
}

/** The help of a command group such as `keys`: its commands. */
export function groupUsage(group: string): string {
  const commands = columns(commandGroup(group).map((command) => [command.name.slice(group.length + 1), command.summary]))
  return `Usage: tessera ${group} <command> [options]\n\nCommands:\n${commands}\n\nRun \`tessera ${group} <command> --help\` for a command's options.`
}

/** The top-level help; `full` adds the environment and the exit codes. */
export function mainUsage(full: boolean): string {
  const commands = columns(COMMANDS.map((command) => [command.name, command.summary]))
  const options = columns([
    ['-h, --help', 'show this help; `tessera <command> --help` shows a command\'s'],
    ['-v, --version', 'print the version']
  ])
  const brief = `Usage: tessera <command> [options]\n\nCommands:\n${commands}\n\nOptions:\n${options}`
  if (!full) return brief
  const environment = columns(ENV_NAMES.map((name) => [name, `${ENVIRONMENT_HELP[name].meaning}: ${ENVIRONMENT_HELP[name].values} (default: ${ENVIRONMENT_HELP[name].default})`]))
  const exitCodes = columns(Object.values(EXIT_CODES).map(({ code, meaning }) => [String(code), meaning]))
  return `${brief}\n\nEnvironment (an empty variable counts as unset):\n${environment}\n\nExit codes:\n${exitCodes}`
}
