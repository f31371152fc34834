/**
 * docs/cli.md against the tables the command is built from: every command's
 * synopsis (as `--help` prints it), every option, variable and exit code.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { commandEnvironment, synopsis } from '../../src/main/cli/command-line'
import { COMMANDS } from '../../src/main/cli/commands'
import { ENV_NAMES } from '../../src/main/cli/environment'
import { EXIT_CODES } from '../../src/main/cli/exit-codes'

const docs = readFileSync(join(__dirname, '..', '..', 'docs', 'cli.md'), 'utf8')

/** The part of the page about one command: from its heading to the next one. */
function section(command: string): string {
  const start = docs.indexOf(`### \`tessera ${command}\``)
  expect(start, command).toBeGreaterThan(-1)
  const end = docs.indexOf('\n## ', start)
  const next = docs.indexOf('\n### ', start + 1)
  return docs.slice(start, Math.min(...[end, next].filter((index) => index > -1)))
}

describe('docs/cli.md', () => {
  it.each(COMMANDS.map((command) => [command.name, command]))('documents `tessera %s` with its synopsis, every option and every variable it reads', (name, command) => {
    const text = section(name)
    expect(text).toContain(synopsis(command))
    for (const option of command.options) expect(text, option.name).toContain(`\`--${option.name}${option.value ? ` ${option.value}` : ''}\``)
    for (const variable of commandEnvironment(command)) {
      const named = text.includes(variable) || (variable.startsWith('TESSERA_SMTP_') && text.includes('TESSERA_SMTP_*'))
      expect(named, `${name}: ${variable}`).toBe(true)
    }
  })

  it('lists every environment variable in the environment table', () => {
    for (const name of ENV_NAMES) expect(docs, name).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'))
  })

  it('lists every exit code, and nothing else, in the exit code table', () => {
    const table = docs.slice(docs.indexOf('## Exit codes'), docs.indexOf('\n## ', docs.indexOf('## Exit codes') + 1))
    const documented = [...table.matchAll(/^\| `(\d+)` \|/gm)].map((match) => Number(match[1]))
    expect(documented).toEqual(Object.values(EXIT_CODES).map(({ code }) => code))
  })
})
