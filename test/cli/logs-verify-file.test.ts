/**
 * `tessera logs verify --file` on exports someone has worked on: what it
 * prints comes from the signature check, never from the file's text; a line
 * reworded without changing its values fails; a huge or wrong file is refused
 * with a clear message and exit code.
 */
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anchorHash, entryHash, keyFingerprint, signHead, signingKeys, type AuditSigningSeed } from '../../src/main/crypto/audit'
import { readySodium } from '../../src/main/crypto/sodium'
import { run } from '../helpers/cli'

const BROKEN = 12

describe('tessera logs verify --file', { timeout: 120_000 }, () => {
  let root: string
  let file: string
  let lines: string[]
  let fingerprint: string

  const verifyFile = (path: string, ...args: string[]) => run(['logs', 'verify', '--file', path, ...args])
  async function written(name: string, content: string[]): Promise<string> {
    const path = join(root, name)
    await writeFile(path, content.join('\n') + '\n')
    return path
  }

  beforeAll(async () => {
    await readySodium()
    root = await mkdtemp(join(tmpdir(), 'tessera-verify-'))
    const dataDir = join(root, 'vault')
    expect((await run(['init', '--data-dir', dataDir])).code).toBe(0)
    file = join(root, 'export.jsonl')
    expect((await run(['logs', 'export', '--data-dir', dataDir, '--out', file])).code).toBe(0)
    lines = (await readFile(file, 'utf8')).trimEnd().split('\n')
    fingerprint = /Signed by key (\S+)\./.exec((await verifyFile(file)).stdout)![1]
    expect(lines.length).toBeGreaterThan(3)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it('refuses a header whose exported_at is not a date-time, printing nothing from it', async () => {
    // Re-signed with another key, its exported_at claiming the real key and hiding the rest of the output.
    const { publicKey, secretKey } = signingKeys(randomBytes(32) as unknown as AuditSigningSeed)
    const header = JSON.parse(lines[0])
    header.public_key = publicKey.toString('base64')
    header.key_fingerprint = keyFingerprint(publicKey)
    header.exported_at = `${header.exported_at}.\nSigned by key ${fingerprint} (the pinned key).\n\u001b[8m`
    const forged = [JSON.stringify(header)]
    let hash = anchorHash(forged[0])
    for (const line of lines.slice(1, -1)) {
      const entry = JSON.parse(line)
      hash = entryHash(hash, { ...entry, created_at: Date.parse(entry.created_at) }, Buffer.from(entry.mac, 'hex'))
      forged.push(JSON.stringify({ ...entry, hash: hash.toString('hex') }))
    }
    const last = JSON.parse(lines.at(-1)!)
    forged.push(JSON.stringify({ head: { ...last.head, hash: hash.toString('hex') }, signature: signHead(secretKey, hash).toString('base64') }))

    const result = await verifyFile(await written('forged.jsonl', forged))
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toBe(`Export BROKEN at line 1: it is not the header of a tessera-audit-log export.\n`)
  })

  it.each([
    ['a duplicated key', (line: string) => line.replace('{', '{"message":"Nothing happened",')],
    ['a \\u escape', (line: string) => line.replace(/"operation":"(\w)/, (_, first: string) => `"operation":"\\u${first.charCodeAt(0).toString(16).padStart(4, '0')}`)],
    ['added spaces', (line: string) => line.replaceAll('","', '", "')],
    ['a reformatted time', (line: string) => line.replace(/("created_at":"[^"]*)\.(\d+)Z"/, (_, start: string, ms: string) => `${start}.${ms}000Z"`)]
  ])('fails on an entry line rewritten with %s, whose values still hash alike', async (name, edit) => {
    const edited = lines.map((line, i) => (i === 2 ? edit(line) : line))
    expect(edited[2]).not.toBe(lines[2])
    const result = await verifyFile(await written(`edited-${name.replace(/\W+/g, '-')}.jsonl`, edited))
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toBe(`Export BROKEN at line 3 (seq 2): it was changed (it is not written as the export writes it).\n`)
  })

  it('fails on a head line with a duplicated key', async () => {
    const edited = [...lines.slice(0, -1), lines.at(-1)!.replace('{', '{"signature":"AAAA",')]
    const result = await verifyFile(await written('edited-head.jsonl', edited))
    expect(result.code).toBe(BROKEN)
    expect(result.stdout).toContain('the head line is malformed')
  })

  it('refuses a huge file without line breaks after reading at most a line of an export, with exit code 12', async () => {
    const huge = join(root, 'huge.jsonl')
    await writeFile(huge, '')
    await truncate(huge, 1 << 30)
    const result = await verifyFile(huge)
    expect(result.code, result.stderr).toBe(BROKEN)
    expect(result.stdout).toBe('Export BROKEN at line 1: the line is longer than 1048576 characters.\n')
  })

  it('refuses a directory with exit code 2', async () => {
    const directory = join(root, 'a-directory')
    await mkdir(directory)
    const result = await verifyFile(directory)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`tessera logs verify: The export ${directory} is a directory.`)
  })
})
