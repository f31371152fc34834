/**
 * A small REST client of a team vault (`tessera serve` on PostgreSQL): one key,
 * JSON in and out, a timeout on every call. The server's problem documents
 * come back as AppErrors with the same code, detail and field errors, so the
 * IPC door hands the window the problem it already knows how to show; a
 * server that cannot be reached, or answers more than any Tessera answer
 * holds, is a 503 that names the host and why, never the key.
 */
import { AppError, ERRORS, VaultLockedError, type ErrorCode, type FieldErrors } from '../app'

/** How long one call may take before it is given up. */
export const TEAM_REQUEST_TIMEOUT_MS = 15_000

/**
 * The most one answer may hold. The largest the desktop asks for is a page of 100 tokens or
 * log entries (a token's data is within the server's 5 MB request limit); more is read no
 * further, so a hostile server cannot fill the main process's memory or the window's.
 */
export const MAX_TEAM_ANSWER_BYTES = 16 * 1024 * 1024

export type QueryValue = string | number | boolean | readonly (string | number)[] | undefined | null
export type Query = Record<string, QueryValue>

export interface TeamRequest {
  query?: Query
  body?: unknown
  /** `PATCH /tokens/{id}` takes merge patches. */
  contentType?: string
}

type Fetch = typeof fetch

/** The code of a status when the server's problem names a code this version does not know. */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'invitation_expired',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  421: 'host_not_allowed',
  422: 'business_rule',
  503: 'vault_locked'
}

interface ProblemBody {
  code?: unknown
  detail?: unknown
  errors?: unknown
}

/** The server's problem as an AppError with the same code, detail and field errors. */
export function errorOfProblem(status: number, body: ProblemBody): AppError {
  const known = typeof body.code === 'string' && Object.hasOwn(ERRORS, body.code) ? (body.code as ErrorCode) : undefined
  const code = known ?? CODE_OF_STATUS[status] ?? 'internal_error'
  const detail = typeof body.detail === 'string' ? body.detail : ERRORS[code].message
  const errors = typeof body.errors === 'object' && body.errors !== null ? (body.errors as FieldErrors) : undefined
  return new AppError(code, detail, errors)
}

/**
 * The codes of a TLS certificate the client refused: Node's own (ERR_TLS_CERT_ALTNAME_INVALID…) and
 * OpenSSL's verification results (DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED…).
 */
const CERTIFICATE_FAILURE = /CERT|CRL|SELF_SIGNED|TLS|SSL|^UNABLE_TO_|^INVALID_(CA|PURPOSE)$|^PATH_LENGTH_EXCEEDED$|^HOSTNAME_MISMATCH$/

/** Why a request never got an answer, in words safe to show (no URL, no key). */
export function describeNetworkFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  const code = cause?.code ?? (error as { name?: string }).name
  if (code === 'TimeoutError' || code === 'AbortError') return 'it did not answer in time'
  if (code === 'ECONNREFUSED') return 'the connection was refused'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its host name could not be resolved'
  if (code === 'ECONNRESET') return 'the connection was reset'
  if (typeof code === 'string' && CERTIFICATE_FAILURE.test(code)) return `its TLS certificate is not trusted (${code})`
  return 'the connection failed'
}

/** `query` as a query string: lists repeat their parameter, empty values are left out. */
export function searchOf(query: Query = {}): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item))
  }
  const text = search.toString()
  return text ? `?${text}` : ''
}

export class TeamClient {
  constructor(
    /** The server's base URL, without a trailing slash. */
    readonly baseUrl: string,
    private readonly key: string,
    private readonly options: { timeoutMs?: number; fetch?: Fetch } = {}
  ) {}

  get host(): string {
    return new URL(this.baseUrl).host
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query })
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, { body })
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body })
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body, contentType: 'application/merge-patch+json' })
  }

  async delete(path: string): Promise<void> {
    await this.request<unknown>('DELETE', path)
  }

  /** One call; resolves with the parsed body (undefined when empty), or throws the server's problem as an AppError. */
  async request<T>(method: string, path: string, request: TeamRequest = {}): Promise<T> {
    const response = await this.send(method, path, request)
    const text = await this.readAnswer(response)
    const body: unknown = text ? parseJson(text) : undefined
    if (!response.ok) throw errorOfProblem(response.status, (body ?? {}) as ProblemBody)
    return body as T
  }

  private async send(method: string, path: string, request: TeamRequest): Promise<Response> {
    const headers: Record<string, string> = { 'svc-api-key': this.key, accept: 'application/json' }
    if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/json'
    try {
      return await (this.options.fetch ?? fetch)(this.baseUrl + path + searchOf(request.query), {
        method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? TEAM_REQUEST_TIMEOUT_MS)
      })
    } catch (error) {
      throw this.unreachable(error)
    }
  }

  /** A 503 for an answer no Tessera vault gives, saying why (in words safe to show). */
  notTesseraAnswer(why: string): AppError {
    return new VaultLockedError(`The team vault at ${this.host} does not answer as a Tessera vault: ${why}.`)
  }

  private unreachable(error: unknown): AppError {
    return new VaultLockedError(`The team vault at ${this.host} cannot be reached: ${describeNetworkFailure(error)}.`)
  }

  /** The body as text, read as it arrives; past MAX_TEAM_ANSWER_BYTES the request is aborted. */
  private async readAnswer(response: Response): Promise<string> {
    if (Number(response.headers.get('content-length')) > MAX_TEAM_ANSWER_BYTES) {
      await response.body?.cancel().catch(() => undefined)
      throw this.tooLarge()
    }
    if (!response.body) return ''
    const reader = response.body.getReader()
    const chunks: Uint8Array[] = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read().catch((error: unknown) => {
        throw this.unreachable(error)
      })
      if (done) return new TextDecoder().decode(Buffer.concat(chunks))
      size += value.byteLength
      if (size > MAX_TEAM_ANSWER_BYTES) {
        await reader.cancel().catch(() => undefined)
        throw this.tooLarge()
      }
      chunks.push(value)
    }
  }

  private tooLarge(): AppError {
    return this.notTesseraAnswer(`its answer is larger than ${MAX_TEAM_ANSWER_BYTES / 1024 / 1024} MiB`)
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
