/**
 * Structured logs (pino). Secrets are redacted by path as a second line of
 * defence; the first is never passing them to the logger at all.
 */
import pino, { type Logger } from 'pino'

export type { Logger }

export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.TESSERA_LOG_LEVEL ?? 'info',
      redact: {
        paths: ['req.headers["svc-api-key"]', 'headers["svc-api-key"]', '*.key', '*.session_key', '*.nonce', '*.data', '*.password'],
        censor: '[redacted]'
      }
    },
    options.destination ?? pino.destination(2)
  )
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
