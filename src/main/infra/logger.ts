/**
 * Structured logs (pino). Secrets are redacted by path as a second line of
 * defence; the first is never passing them to the logger at all.
 */
import pino, { type Logger } from 'pino'

export type { Logger }

/**
 * A logger at `level` (default `TESSERA_LOG_LEVEL`, else `info`). An unknown
 * level logs at `info` with a warning instead of throwing: the desktop app
 * must start whatever its environment says (the CLI refuses it up front).
 */
export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const requested = options.level ?? process.env.TESSERA_LOG_LEVEL ?? 'info'
  const known = requested === 'silent' || Object.hasOwn(pino.levels.values, requested)
  const logger = pino(
    {
      level: known ? requested : 'info',
      redact: {
        paths: ['req.headers["svc-api-key"]', 'headers["svc-api-key"]', '*.key', '*.session_key', '*.nonce', '*.data', '*.password'],
        censor: '[redacted]'
      }
    },
    options.destination ?? pino.destination(2)
  )
  if (!known) logger.warn({ requested_level: requested.slice(0, 40) }, 'unknown log level; logging at info')
  return logger
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
