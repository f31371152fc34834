/**
 * A request body sent without a Content-Encoding, read and parsed as co-body
 * reads and parses it, through the same libraries (raw-body, bourne), without
 * what co-body adds for every body: a copy of its options, the inflation
 * stream and an iconv decoder. Every create reads one body. Encoded bodies,
 * and a stream already read, still go through co-body.
 */
import type { IncomingMessage } from 'node:http'
import { parse as parseJson } from '@hapi/bourne'
import getRawBody from 'raw-body'

/** Whether `readBodyText` reads this request as co-body would: no Content-Encoding to undo, the stream not yet read. */
export function readsAsText(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding']
  return (!encoding || encoding === 'identity') && req.readable
}

const BYTE_ORDER_MARK = 0xfeff

/** The body's UTF-8 text, a leading byte order mark dropped; rejects as raw-body does (413 past the limit, 400 for a length that is not the Content-Length). */
export async function readBodyText(req: IncomingMessage, limitBytes: number): Promise<string> {
  // Read as co-body reads the header: `~~` of any value present.
  const declared = req.headers['content-length']
  const text = (await getRawBody(req, { limit: limitBytes, length: declared ? ~~declared : undefined })).toString('utf8')
  return text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text
}

/** The JSON value of a body's text as co-body parses it (not strict: an empty text stays empty); a `__proto__` key anywhere is a SyntaxError. */
export function parseBodyText(text: string): unknown {
  return text === '' ? text : parseJson(text, { protoAction: 'error' })
}
