/**
 * The audit messages written most are a few constant texts ('Token retrieved',
 * 'Token created', …). In SQLite an entry whose message is in the catalogue
 * below stores, in its `message` column, a one-byte BLOB holding the text's
 * code; any other message is stored as text. The column's TEXT affinity keeps
 * a BLOB as it is, so a BLOB and a TEXT are told apart by type, and rows
 * stored as text read as they always did. The text read back is exactly the
 * text written: the audit chain's MACs cover it.
 *
 * THE CATALOGUE IS APPEND-ONLY. Stored entries hold these codes for as long
 * as the vault keeps them: a code, once given, stands for its text for ever.
 * Never reuse, reorder, renumber or remove a code, nor change a text; to store
 * a new constant message compactly, add it with the next unused code (at most 255).
 */

const CATALOGUE: readonly (readonly [code: number, text: string])[] = [
  [1, 'Token created'],
  [2, 'Token created by tokenize'],
  [3, 'Token retrieved'],
  [4, 'Token listed'],
  [5, 'Token found by search'],
  [6, 'Token detokenized'],
  [7, 'Token returned by deduplication'],
  [8, 'Token updated'],
  [9, 'Token deleted'],
  [10, 'Token expired and deleted'],
  [11, 'CVC removed after retention window'],
  [12, 'Token intent retrieved'],
  [13, 'Token intent deleted'],
  [14, 'Token intent expired and deleted'],
  [15, 'Application created without a key'],
  [16, 'Application retrieved'],
  [17, 'Application updated'],
  [18, 'Application key regenerated'],
  [19, 'Application keys listed'],
  [20, 'Application deleted'],
  [21, 'Application deleted on expiry'],
  [22, 'Session created'],
  [23, 'Session authorized'],
  [24, 'Session listed'],
  [25, 'Session revoked'],
  [26, 'Session revoked: its authorizing application no longer holds what it granted'],
  [27, 'Session revoked: its application got a new key'],
  [28, 'Session revoked: its application was deleted'],
  [29, 'Session revoked: its application expired'],
  [30, 'Session expired'],
  [31, 'Invitation created'],
  [32, 'Invitation resent'],
  [33, 'Invitation retrieved'],
  [34, 'Invitation deleted'],
  [35, 'Invitation accepted'],
  [36, 'Invitation expired'],
  [37, 'Member created'],
  [38, 'Member deleted'],
  [39, 'Tenant created'],
  [40, 'Tenant retrieved'],
  [41, 'Tenant renamed'],
  [42, 'Webhook deleted'],
  [43, 'Audit log entity types listed'],
  [44, 'Vault unlocked in the desktop app'],
  [45, 'Vault locked in the desktop app'],
  [46, 'Vault locked: the computer went to sleep'],
  [47, 'Vault locked: the screen was locked']
]

const MAX_CODE = 255

/** Each catalogued text's stored form: one Buffer per code, shared by the rows, which only read it. */
const CODES = new Map<string, Buffer>()
const TEXTS = new Map<number, string>()
for (const [code, text] of CATALOGUE) {
  if (!Number.isInteger(code) || code < 1 || code > MAX_CODE || TEXTS.has(code) || CODES.has(text)) throw new Error(`Audit message code ${code} (${text}) is out of range or given twice`)
  CODES.set(text, Buffer.of(code))
  TEXTS.set(code, text)
}

/** A message as SQLite stores it: its code if catalogued, else the text itself. */
export function storedMessage(text: string): string | Buffer {
  return CODES.get(text) ?? text
}

/**
 * The text a stored message stands for. An unknown code (an altered entry) reads as
 * a text no entry holds, so the entry's MAC fails to verify.
 */
export function messageText(stored: string | Uint8Array): string {
  if (typeof stored === 'string') return stored
  const text = stored.length === 1 ? TEXTS.get(stored[0]) : undefined
  return text ?? `unknown message code ${Buffer.from(stored).toString('hex')}`
}
