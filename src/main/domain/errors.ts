/**
 * Expected failures of the domain. Each carries the HTTP status it maps to and a
 * message that is safe to show: never put token data, keys or raw database
 * errors in one. Anything that is not an AppError is a bug and becomes a generic 500.
 */

/** Field path → messages, e.g. `{ "[3].data.number": ["fails the Luhn check"] }`. */
export type FieldErrors = Record<string, string[]>

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldErrors
  ) {
    super(message)
    this.name = new.target.name
  }
}

/** 400: the request is malformed; `errors` names each offending field. */
export class ValidationError extends AppError {
  constructor(errors: FieldErrors, message = 'The request has invalid fields.') {
    super(400, 'validation_failed', message, errors)
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
    message = 'A valid SVC-API-KEY header is required.',
    readonly reason = 'no valid credential'
  ) {
    super(401, 'unauthenticated', message)
  }
}

/** 403: the caller is authenticated but lacks the permission or rule. */
export class ForbiddenError extends AppError {
  constructor(message = 'The caller is not allowed to perform this operation.') {
    super(403, 'forbidden', message)
  }
}

/** 404: no such entity in the caller's tenant. */
export class NotFoundError extends AppError {
  constructor(entity: string) {
    super(404, 'not_found', `${entity} not found.`)
  }
}

/** 409: the request conflicts with current state (duplicate id, used nonce). */
export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, 'conflict', message)
  }
}

/** 413: the body exceeds the configured limit. */
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(413, 'payload_too_large', `The request body exceeds the limit of ${limitBytes} bytes.`)
  }
}

/**
 * 413: the request's expressions need more time than one request may spend on them;
 * `errors` names the field where the budget ran out.
 */
export class ExpressionBudgetError extends AppError {
  constructor(field: string, budgetMs: number) {
    super(413, 'expression_budget_exceeded', `The request's expressions need more than the ${budgetMs} ms one request may spend on them.`, {
      [field]: [`the request's ${budgetMs} ms expression budget ran out here`]
    })
  }
}

/** 415: the request's Content-Type is not the one the endpoint takes. */
export class UnsupportedMediaTypeError extends AppError {
  constructor(expected: string) {
    super(415, 'unsupported_media_type', `Content-Type must be ${expected}.`)
  }
}

/** 422: the request is well-formed but breaks a business rule. */
export class BusinessRuleError extends AppError {
  constructor(message: string) {
    super(422, 'business_rule', message)
  }
}

/** Thrown when the master key cannot unwrap the vault's keys. */
export class VaultLockedError extends AppError {
  constructor(message = 'Cannot unlock vault: the master key does not match this vault.') {
    super(503, 'vault_locked', message)
  }
}
