import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../../src/main/infra/logger'

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = []
  const destination = new PassThrough()
  destination.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n').map((line) => JSON.parse(line))))
  return { logger: createLogger({ level, destination }), lines }
}

describe('createLogger', () => {
  it('logs at the level asked for', async () => {
    const { logger, lines } = capture('warn')
    logger.info('hidden')
    logger.warn('shown')
    await new Promise((resolve) => setImmediate(resolve))
    expect(lines.map((line) => line.msg)).toEqual(['shown'])
  })

  it('falls back to info with a warning on an unknown level instead of throwing (the desktop app must start)', async () => {
    const { logger, lines } = capture('loud')
    logger.debug('hidden')
    logger.info('shown')
    await new Promise((resolve) => setImmediate(resolve))
    expect(lines.map((line) => line.msg)).toEqual(['unknown log level; logging at info', 'shown'])
    expect(lines[0].requested_level).toBe('loud')
  })

  it('redacts secrets passed by mistake', async () => {
    const { logger, lines } = capture('info')
    logger.info({ app: { key: 'key_private_secret' } }, 'created')
    await new Promise((resolve) => setImmediate(resolve))
    expect(JSON.stringify(lines)).not.toContain('key_private_secret')
  })
})
