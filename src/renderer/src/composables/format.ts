/** Display helpers shared by the views. */

/** Made once: `toLocaleString` with options builds a formatter on every call, about a millisecond each in a table. */
const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' })

/** A short local date-time, or an em dash. */
export function formatDateTime(iso: string | undefined | null): string {
  if (!iso) return '—'
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  return DATE_TIME.format(date)
}

/** Token data (masked or revealed) as one line of text. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '—'
  if (typeof value === 'string') return value
  return JSON.stringify(value)
}

/** Token data for a table cell: an object's values joined (`XXXXXXXXXXXX4242 · 12 · 2030`), anything else as `formatValue`. */
export function formatCompact(value: unknown): string {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return Object.values(value).map(formatValue).join(' · ')
  return formatValue(value)
}

/** What would let one entry of `key=value, key=value` pass for two, or two for one. */
const AMBIGUOUS_METADATA_TEXT = /[,="\\]|^\s|\s$|^$/

/** A metadata key or value as shown: in JSON quotes when it holds a separator, a quote or edge spaces. */
function metadataText(text: string): string {
  return AMBIGUOUS_METADATA_TEXT.test(text) ? JSON.stringify(text) : text
}

/** Each metadata entry as `key=value`, quoted where needed: `customer="carol, verified=true"` is one entry. */
export function metadataEntries(metadata: Record<string, string> | undefined): string[] {
  return Object.entries(metadata ?? {}).map(([key, value]) => `${metadataText(key)}=${metadataText(value)}`)
}

/** `m:ss` for a countdown; `0:00` once past. */
export function formatCountdown(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`
}

/**
 * The token expiry format of the spec (`M/D/YYYY h:mm:ss AM +00:00`), in UTC,
 * from an epoch-ms date picked in the GUI.
 */
export function toTokenExpiry(epochMs: number): string {
  const date = new Date(epochMs)
  const hours = date.getUTCHours()
  const hour12 = hours % 12 === 0 ? 12 : hours % 12
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getUTCMonth() + 1}/${date.getUTCDate()}/${date.getUTCFullYear()} ${hour12}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} ${hours < 12 ? 'AM' : 'PM'} +00:00`
}
