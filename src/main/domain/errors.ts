/**
 * Every expected failure of the project. `ERRORS` is the one table of error
 * codes: each code's HTTP status and its default message, which is safe to
 * show. Never put token data, keys or raw database errors in a message.
 * Anything thrown that is not an AppError is a bug and becomes a generic 500.
 */

/** Error code → HTTP status and default message; problem documents carry the code in `code`. */
export const ERRORS = {
  validation_failed: { status: 400, message: 'The request has invalid fields.' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  unauthenticated: { status: 401, message: 'A valid SVC-API-KEY header is required.' },
  forbidden: { status: 403, message: 'The caller is not allowed to perform this operation.' },
  ipc_sender_refused: { status: 403, message: 'This caller may not use the IPC contract.' },
  not_through_proxy: { status: 403, message: 'This service takes plain HTTP only from its reverse proxies: connect through the proxy, over TLS.' },
  not_found: { status: 404, message: 'Not found.' },
  route_not_found: { status: 404, message: 'No such route.' },
  unknown_channel: { status: 404, message: 'No such IPC channel.' },
  invitation_link_invalid: {
    status: 404,
    message: 'This invitation link is not valid: it was already used, replaced by a newer link, or the invitation was deleted.'
  },
  method_not_allowed: { status: 405, message: 'The method is not allowed on this route.' },
  conflict: { status: 409, message: 'The request conflicts with the current state.' },
  not_on_team_vault: { status: 409, message: 'Not available on a team vault: use the `tessera` CLI on the server.' },
  invitation_expired: { status: 410, message: 'This invitation has expired. Ask the tenant administrator to resend it.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  expression_budget_exceeded: { status: 413, message: "The request's expressions need more time than one request may spend on them." },
  unsupported_media_type: { status: 415, message: 'Unsupported request body encoding.' },
  unsupported_content_encoding: { status: 415, message: 'Content-Encoding must be one of gzip, deflate, br or identity.' },
  unsupported_charset: { status: 415, message: 'The body must be UTF-8: send charset=utf-8 or no charset.' },
  host_not_allowed: { status: 421, message: 'The Host header names a host this service does not serve.' },
  business_rule: { status: 422, message: 'The request breaks a business rule.' },
  internal_error: { status: 500, message: 'An unexpected error occurred.' },
  vault_locked: { status: 503, message: 'The vault is locked. Unlock it to continue.' },
  database_unavailable: { status: 503, message: 'This instance cannot reach the team database.' }
} as const satisfies Record<string, { status: number; message: string }>

export type ErrorCode = keyof typeof ERRORS

/** Field path → messages, e.g. `{ "[3].data.number": ["fails the Luhn check"] }`. */
export type FieldErrors = Record<string, string[]>

/** An expected failure: a code of `ERRORS`, its status, and a message safe to show. */
export class AppError extends Error {
  readonly status: number

  constructor(
    readonly code: ErrorCode,
    message: string = ERRORS[code].message,
    readonly errors?: FieldErrors
  ) {
    super(message)
    this.status = ERRORS[code].status
    this.name = new.target.name
  }
}

/** 400: the request is malformed; `errors` names each offending field. */
export class ValidationError extends AppError {
  constructor(errors: FieldErrors, message: string = ERRORS.validation_failed.message) {
    super('validation_failed', message, errors)
  }

  /** A single-field validation error. */
  static field(path: string, message: string): ValidationError {
    return new ValidationError({ [path]: [message] })
  }
}

/** 401: missing, unknown or expired credential. */
export class UnauthenticatedError extends AppError {
  /**
   * @param reason what the audit log records: safe to store, never the
   *   presented secret (at most its type, such as `key_private`)
   */
  constructor(
    message: string = ERRORS.unauthenticated.message,
    readonly reason = 'no valid credential'
  ) {
    super('unauthenticated', message)
  }
}

/** 403: the caller is authenticated but lacks the permission or rule. */
export class ForbiddenError extends AppError {
  constructor(message: string = ERRORS.forbidden.message) {
    super('forbidden', message)
  }
}

/** 404: no such entity in the caller's tenant. */
export class NotFoundError extends AppError {
  constructor(entity: string) {
    super('not_found', `${entity} not found.`)
  }
}

/** 409: the request conflicts with current state (duplicate id, used nonce). */
export class ConflictError extends AppError {
  constructor(message: string) {
    super('conflict', message)
  }
}

/**
 * 413: the request's expressions need more time than one request may spend on them;
 * `errors` names the field where the budget ran out.
 */
export class ExpressionBudgetError extends AppError {
  constructor(field: string, budgetMs: number) {
    super('expression_budget_exceeded', `The request's expressions need more than the ${budgetMs} ms one request may spend on them.`, {
      [field]: [`the request's ${budgetMs} ms expression budget ran out here`]
    })
  }
}

/** 415: the request's Content-Type is not the one the endpoint takes. */
export class UnsupportedMediaTypeError extends AppError {
  constructor(expected: string) {
    super('unsupported_media_type', `Content-Type must be ${expected}.`)
  }
}

/** 422: the request is well-formed but breaks a business rule. */
export class BusinessRuleError extends AppError {
  constructor(message: string) {
    super('business_rule', message)
  }
}

/** 503: the vault is not open (locked, or it could not be opened: the message says why). */
export class VaultLockedError extends AppError {
  constructor(message: string = ERRORS.vault_locked.message) {
    super('vault_locked', message)
  }
}

/** 503: an instance of a team vault whose database does not answer. */
export class DatabaseUnavailableError extends AppError {
  constructor() {
    super('database_unavailable')
  }
}

/** 409: the desktop is connected to a team vault, and this only exists for its embedded vault. */
export class NotOnTeamVaultError extends AppError {
  constructor(what: string) {
    super('not_on_team_vault', `${what} is not available on a team vault: use the \`tessera\` CLI on the server.`)
  }
}

/** 404: the invitation link was used, replaced by a newer one, or its invitation deleted. */
export class InvitationLinkInvalidError extends AppError {
  constructor() {
    super('invitation_link_invalid')
  }
}

/** 410: the link is the current one, but the invitation has expired. */
export class InvitationExpiredError extends AppError {
  constructor() {
    super('invitation_expired')
  }
}

/**
 * Why the vault cannot be opened (a wrong or missing master key, no vault, an
 * unreadable setting); the message and the hint are safe to print. Not an HTTP
 * error: the CLI and the desktop app report it when they open the vault.
 */
export class CannotUnlockError extends Error {
  constructor(
    reason: string,
    /** How to fix it, when the reason does not say. */
    readonly hint?: string
  ) {
    super(`Cannot unlock vault: ${reason}`)
    this.name = 'CannotUnlockError'
  }
}

/** `init` on a data directory (or a team vault's database) that already holds a vault. A database URL may hold a password: never in the message. */
export class VaultAlreadyInitialisedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly teamVault = false
  ) {
    super(teamVault ? 'A vault already exists in that database; refusing to overwrite it.' : `A vault already exists in ${dataDir}; refusing to overwrite it.`)
    this.name = 'VaultAlreadyInitialisedError'
  }
}
