/**
 * A file option naming a named pipe or a device is refused at once (exit 2)
 * rather than read: a pipe would wait forever for a writer, /dev/zero would be
 * read until memory runs out. A certificate or key over 1 MiB is refused too.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start } from '../helpers/cli'

/** Runs `tessera args…`, killed after 15 s: a command that hangs ends without an exit code. */
const runBriefly = (args: string[]) => start(args, {}, {}, 15_000).finished

describe.skipIf(process.platform === 'win32')('file options naming a pipe or a device', { timeout: 60_000 }, () => {
  let root: string
  let fifo: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-unusable-'))
    fifo = join(root, 'pipe')
    execFileSync('mkfifo', [fifo])
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  const serve = (cert: string, key: string) => runBriefly(['serve', '--data-dir', join(root, 'vault'), '--port', '0', '--tls-cert', cert, '--tls-key', key])

  it('serve refuses a named pipe as --tls-cert and --tls-key with exit code 2, at once', async () => {
    const result = await serve(fifo, fifo)
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain(`--tls-cert ${fifo}: it is not a regular file (a device, a pipe or a socket).`)
    expect(result.stderr).toContain('hint: give --tls-cert the path of a PEM file (a regular file).')
  })

  it('serve refuses /dev/zero as --tls-cert with exit code 2, at once', async () => {
    const key = join(root, 'key.pem')
    await writeFile(key, 'not read\n')
    const result = await serve('/dev/zero', key)
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain('--tls-cert /dev/zero: it is not a regular file')
  })

  it('serve refuses a --tls-key over 1 MiB with exit code 2', async () => {
    const cert = join(root, 'cert.pem')
    const key = join(root, 'huge.pem')
    await writeFile(cert, 'not read either\n')
    await writeFile(key, Buffer.alloc(1024 * 1024 + 1, 'A'))
    const result = await serve(cert, key)
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain(`--tls-key ${key} is larger than 1 MiB`)
    expect(result.stderr).toContain('hint: give --tls-key')
  })

  it('logs verify refuses a named pipe as --file with exit code 2, at once', async () => {
    const result = await runBriefly(['logs', 'verify', '--file', fifo])
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain(`Cannot read the export ${fifo}: it is not a regular file (a device, a pipe or a socket).`)
    expect(result.stderr).toContain('hint: give --file')
  })
})
