/**
 * The dates of `tessera logs archive --before` and `logs export --since/--until`
 * are read strictly, whatever the machine's time zone: a date is midnight UTC, a
 * date-time needs Z or an offset (never read in local time), and a day that does
 * not exist is exit 2 naming the option, with nothing written or pruned.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../helpers/cli'

describe('tessera logs dates', { timeout: 120_000 }, () => {
  let root: string
  let dataDir: string
  const LOS_ANGELES = { TZ: 'America/Los_Angeles' }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-logs-dates-'))
    dataDir = join(root, 'vault')
    const init = await run(['init', '--data-dir', dataDir])
    expect(init.code, init.stderr).toBe(0)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it.each([
    ['archive', '--before', '2026-02-30', 'names a day or time that does not exist'],
    ['archive', '--before', '2026-13-01', 'names a day or time that does not exist'],
    ['archive', '--before', '2026-11-01T24:00:00Z', 'names a day or time that does not exist'],
    ['archive', '--before', '2026-11-29T03:53:25', 'must state its time zone: add Z (UTC) or an offset'],
    ['export', '--since', '2026-11-29T03:53:25', 'must state its time zone: add Z (UTC) or an offset'],
    ['export', '--until', '2026-02-30', 'names a day or time that does not exist'],
    ['export', '--until', '2026-11-01 (x)', 'must be an ISO 8601 date']
  ])('logs %s %s %s is exit 2 naming the option (TZ=America/Los_Angeles), writing nothing', async (command, option, value, message) => {
    const out = join(root, `${command}-${option.slice(2)}.jsonl`)
    const result = await run(['logs', command, '--data-dir', dataDir, option, value, '--out', out], LOS_ANGELES)
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain(`${option} ${message}`)
    expect(existsSync(out)).toBe(false)
  })

  it('reads a date as midnight UTC and a date-time by its Z or offset, whatever the time zone (as the export header states)', async () => {
    const since = async (value: string, env: Record<string, string>) => {
      const out = join(root, `export-${value.replace(/[^\dA-Z]/g, '')}-${(env.TZ ?? 'none').replace('/', '-')}.jsonl`)
      const result = await run(['logs', 'export', '--data-dir', dataDir, '--since', value, '--out', out], env)
      expect(result.code, result.stderr).toBe(0)
      const [header] = (await readFile(out, 'utf8')).split('\n')
      return (JSON.parse(header) as { since: string }).since
    }
    expect(await since('2026-11-01', LOS_ANGELES)).toBe('2026-11-01T00:00:00.000Z')
    expect(await since('2026-11-01', { TZ: 'Asia/Tokyo' })).toBe('2026-11-01T00:00:00.000Z')
    expect(await since('2026-11-29T03:53:25Z', LOS_ANGELES)).toBe('2026-11-29T03:53:25.000Z')
    expect(await since('2026-11-28T19:53:25.5-08:00', LOS_ANGELES)).toBe('2026-11-29T03:53:25.500Z')
    expect(await since('2026-11-29T04:53:25+01:00', { TZ: 'UTC' })).toBe('2026-11-29T03:53:25.000Z')
  })
})
