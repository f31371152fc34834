/**
 * The benchmarks' command-line options: `--help` prints the usage, and an
 * unknown or malformed option prints it too, with what was wrong, instead of a
 * stack trace (or, for `npm run bench`, a full run that ignored the option).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { integerWithin } from '../src/shared/token-rules'

type Options = NonNullable<ParseArgsConfig['options']>
type Values<T extends Options> = ReturnType<typeof parseArgs<{ options: T }>>['values']

export function benchOptions<T extends Options>(usage: string, options: T): Values<T> {
  try {
    const { values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false })
    if ((values as { help?: boolean }).help) {
      console.log(usage)
      process.exit(0)
    }
    return values as Values<T>
  } catch (error) {
    return usageError(usage, (error as Error).message)
  }
}

/** Says what was wrong with the command line, then how to use it, and exits with code 2. */
function usageError(usage: string, problem: string): never {
  console.error(`${problem}\n\n${usage}`)
  process.exit(2)
}

/** A whole number of at least 1 given as `--name`, or the usage and exit code 2. */
export function positiveInteger(usage: string, name: string, text: string): number {
  const value = Number(text)
  if (integerWithin(value, 1, Number.MAX_SAFE_INTEGER)) return value
  return usageError(usage, `--${name} must be a whole number of at least 1 (got ${text})`)
}

/** The `--engine` a benchmark runs on, or the usage and exit code 2. */
export function engineOption(usage: string, text: string): 'sqlite' | 'postgres' {
  if (text === 'sqlite' || text === 'postgres') return text
  return usageError(usage, `--engine must be sqlite or postgres (got ${text})`)
}
