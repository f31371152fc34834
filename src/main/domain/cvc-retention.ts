/**
 * CVC retention (PCI DSS 3.3.1.2). A card's `cvc` is sensitive authentication
 * data: it may be kept only as long as it takes to use it (authorise a payment),
 * so it is removed from the stored data once a retention window has passed, by
 * the `expire-cvc` sweep. With a window of 0 it is never stored at all.
 *
 * The fingerprint and search indexes are computed when the token is written, so
 * removing the CVC later changes neither: deduplication keeps working.
 */
import { Duration } from 'luxon'
import type { TokenTypeDefinition } from './token-types'

export const DEFAULT_CVC_RETENTION_MS = 60 * 60_000
/** A longer window is refused: the CVC is for authorising a payment, not for keeping. */
export const MAX_CVC_RETENTION_MS = 24 * 60 * 60_000

const FORMAT_HINT = 'a whole number of seconds (3600) or an ISO 8601 duration (PT1H), from 0 to 24 hours'

/**
 * `TESSERA_CVC_RETENTION`: whole seconds (`3600`, `0`) or an ISO 8601 duration
 * (`PT1H`, `PT15M`). Unset or empty means the default, one hour.
 * @throws Error with a message fit for the user when the value is malformed or out of range
 */
export function parseCvcRetention(value: string | undefined): number {
  const text = value?.trim() ?? ''
  if (text === '') return DEFAULT_CVC_RETENTION_MS
  let ms: number
  if (/^\d{1,9}$/.test(text)) ms = Number(text) * 1000
  else {
    const duration = Duration.fromISO(text.toUpperCase())
    // luxon reads a bare `PT` as zero: a duration must name at least one amount.
    if (!duration.isValid || !/\d/.test(text)) throw new Error(`TESSERA_CVC_RETENTION must be ${FORMAT_HINT}; "${text}" is neither.`)
    ms = duration.as('milliseconds')
  }
  if (!(ms >= 0 && ms <= MAX_CVC_RETENTION_MS)) throw new Error(`TESSERA_CVC_RETENTION must be ${FORMAT_HINT}.`)
  return Math.round(ms)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Whether `data` holds one of the type's short-lived fields. */
export function holdsShortLived(type: TokenTypeDefinition, data: unknown): boolean {
  return isRecord(data) && (type.shortLivedFields ?? []).some((field) => data[field] !== undefined && data[field] !== null)
}

/** `data` without the type's short-lived fields (a copy; other data is returned as is). */
export function withoutShortLived(type: TokenTypeDefinition, data: unknown): unknown {
  if (!holdsShortLived(type, data)) return data
  const kept = { ...(data as Record<string, unknown>) }
  for (const field of type.shortLivedFields ?? []) delete kept[field]
  return kept
}

/** Whether the short-lived fields of `before` and `after` are the same values. */
export function sameShortLived(type: TokenTypeDefinition, before: unknown, after: unknown): boolean {
  const read = (data: unknown, field: string) => (isRecord(data) ? data[field] : undefined)
  return (type.shortLivedFields ?? []).every((field) => read(before, field) === read(after, field))
}

/** What to store for new data: the data itself and when its CVC goes, or the data without it when the window is 0. */
export function retainShortLived(type: TokenTypeDefinition, data: unknown, now: number, retentionMs: number): { data: unknown; expiresAt: number | null } {
  if (!holdsShortLived(type, data)) return { data, expiresAt: null }
  if (retentionMs === 0) return { data: withoutShortLived(type, data), expiresAt: null }
  return { data, expiresAt: now + retentionMs }
}
