/**
 * A request body sent without a Content-Encoding, read and parsed as co-body
 * reads and parses it (through raw-body, iconv-lite and bourne): the UTF-8
 * text with a leading byte order mark dropped, the same errors (413 past the
 * size limit, 400 for an aborted request or a body whose length is not its
 * Content-Length, a SyntaxError for invalid JSON or a `__proto__` key), without
 * what co-body sets up for every body: a copy of its options, an iconv decoder,
 * a closure per event and their removal. Every create reads one body.
 * Encoded bodies, and a stream already read, still go through co-body.
 */
import type { IncomingMessage } from 'node:http'

/** A failure to read a body, as raw-body reports it: an exposed status that the error handler answers with. */
export class BodyReadError extends Error {
  readonly expose = true

  constructor(
    readonly status: number,
    message: string,
    readonly type: string
  ) {
    super(message)
  }
}

const tooLarge = () => new BodyReadError(413, 'request entity too large', 'entity.too.large')

/** Whether `readBodyText` reads this request as co-body would: no Content-Encoding to undo, the stream not yet read. */
export function readsAsText(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding']
  return (!encoding || encoding === 'identity') && req.readable
}

/** The body's text; rejects as raw-body does (BodyReadError, or the stream's own error). */
export function readBodyText(req: IncomingMessage, limitBytes: number): Promise<string> {
  // Read as co-body reads the header: `~~` of any value present.
  const declared = req.headers['content-length']
  const expected = declared ? ~~declared : null
  if (expected !== null && expected > limitBytes) {
    halt(req)
    return Promise.reject(tooLarge())
  }
  return new Promise((resolve, reject) => new TextReader(req, limitBytes, expected, resolve, reject))
}

/** Stops a request that failed from flowing (its remaining bytes are dumped once the response is sent). */
function halt(req: IncomingMessage): void {
  req.unpipe()
  req.pause()
}

/** One body being read, from the request's events until it ends or fails. */
class TextReader {
  private readonly chunks: Buffer[] = []
  private received = 0
  private settled = false

  constructor(
    private readonly req: IncomingMessage,
    private readonly limitBytes: number,
    private readonly expected: number | null,
    private readonly resolve: (text: string) => void,
    private readonly reject: (error: unknown) => void
  ) {
    // Unnamed listeners: the CLI runs under tsx, which names every named closure as it is made.
    req.on('aborted', () => this.fail(new BodyReadError(400, 'request aborted', 'request.aborted')))
    req.on('data', (chunk: Buffer) => this.take(chunk))
    req.on('end', () => this.finish())
    req.on('error', (error: unknown) => this.fail(error))
  }

  private take(chunk: Buffer): void {
    if (this.settled) return
    this.received += chunk.length
    if (this.received > this.limitBytes) this.fail(tooLarge())
    else this.chunks.push(chunk)
  }

  private finish(): void {
    if (this.settled) return
    if (this.expected !== null && this.received !== this.expected) {
      this.fail(new BodyReadError(400, 'request size did not match content length', 'request.size.invalid'))
      return
    }
    this.settled = true
    const text = (this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.received)).toString('utf8')
    this.resolve(text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text)
  }

  private fail(error: unknown): void {
    if (this.settled) return
    this.settled = true
    this.chunks.length = 0
    halt(this.req)
    this.reject(error)
  }
}

const BYTE_ORDER_MARK = 0xfeff

/** `"__proto__":` however its characters are escaped: a body holding it is scanned for the key (bourne's test). */
const PROTO_KEY = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/

/** The JSON value of a body's text as co-body parses it (not strict: an empty text stays empty); a `__proto__` key anywhere is a SyntaxError. */
export function parseBodyText(text: string): unknown {
  if (text === '') return text
  const value: unknown = JSON.parse(text)
  if (value !== null && typeof value === 'object' && PROTO_KEY.test(text)) refuseProtoKeys(value)
  return value
}

/** Prototype poisoning: an object of the body with its own `__proto__` key. */
function refuseProtoKeys(root: object): void {
  let level: object[] = [root]
  while (level.length > 0) {
    const next: object[] = []
    for (const node of level) {
      if (Object.hasOwn(node, '__proto__')) throw new SyntaxError('Object contains forbidden prototype property')
      for (const value of Object.values(node)) if (value !== null && typeof value === 'object') next.push(value as object)
    }
    level = next
  }
}
