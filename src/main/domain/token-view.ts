/**
 * The token object a caller sees (spec "Token object"), shaped by the
 * caller's transform: redact drops `data`, mask shows the evaluated mask (or
 * drops `data` when the token has none), reveal shows the plaintext.
 */
import type { Token, Transform } from '../../shared/types'
import { toIsoString } from './dates'
import { ExpressionBudgetError, ValidationError } from './errors'
import { checkMaskMaximum } from './expression-rules'
import { evaluateMask, type ExpressionBudget } from './expressions'
import type { StoredToken } from './token'
import { getTokenType, type TokenTypeDefinition } from './token-types'

export interface ViewOptions {
  /**
   * Single-token responses (create, get, update) of types like `card` show the
   * evaluated mask in `mask`; tokenize and list responses show the expression.
   */
  single: boolean
  /** The request's expression budget for evaluating custom masks (a list shares one); a fresh one when absent. */
  budget?: ExpressionBudget
}

const createdAtByToken = new WeakMap<StoredToken, string>()
/** The last time formatted: the tokens of one bulk tokenize all share theirs. */
let lastCreated = { at: Number.NaN, iso: '' }

/**
 * `created_at` in ISO 8601, once per token object (hot tokens come from the cache again and
 * again), or once per time for tokens made together (no entry per token in the WeakMap).
 */
function createdAtOf(token: StoredToken): string {
  if (token.created_at === lastCreated.at) return lastCreated.iso
  let iso = createdAtByToken.get(token)
  if (iso === undefined) {
    iso = toIsoString(token.created_at)
    createdAtByToken.set(token, iso)
    lastCreated = { at: token.created_at, iso }
  }
  return iso
}

/** The value of `data` under a transform; undefined means the field is left out. */
export function transformData(row: StoredToken, data: unknown, transform: Transform, budget?: ExpressionBudget): unknown {
  if (transform === 'reveal') return data
  if (transform === 'redact') return undefined
  return maskedData(row, data, budget)
}

/**
 * The masked view of `data` (undefined when the token has no mask): the type's default mask
 * natively, or the stored mask evaluated — unless it shows more of a card or bank than the
 * type allows (a mask stored before that rule existed), which reads as the default mask.
 */
function maskedData(row: StoredToken, data: unknown, budget?: ExpressionBudget): unknown {
  if (row.mask === null) return undefined
  const type = getTokenType(row.type)
  if (type?.applyDefaultMask && (usesDefaultMask(row, type) || !withinMaximum(row, type))) return type.applyDefaultMask(data)
  return maskedValue(row.mask, data, budget)
}

const withinMaximumByRow = new WeakMap<StoredToken, boolean>()

/** Whether a row's mask keeps within its type's maximum; remembered per row object, as hot rows are read again and again. */
function withinMaximum(row: StoredToken, type: TokenTypeDefinition): boolean {
  let within = withinMaximumByRow.get(row)
  if (within === undefined) {
    try {
      checkMaskMaximum(row.mask, type, 'mask')
      within = true
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      within = false
    }
    withinMaximumByRow.set(row, within)
  }
  return within
}

const defaultMaskJsonByType = new WeakMap<TokenTypeDefinition, string>()
const usesDefaultMaskByToken = new WeakMap<StoredToken, boolean>()

/** Whether a token's mask is its type's default mask (evaluated natively); remembered per token object. */
export function usesDefaultMask(token: StoredToken, type: TokenTypeDefinition): boolean {
  if (token.mask === type.defaultMask) return true
  let uses = usesDefaultMaskByToken.get(token)
  if (uses === undefined) {
    let json = defaultMaskJsonByType.get(type)
    if (json === undefined) defaultMaskJsonByType.set(type, (json = JSON.stringify(type.defaultMask)))
    usesDefaultMaskByToken.set(token, (uses = JSON.stringify(token.mask) === json))
  }
  return uses
}

/**
 * The mask evaluated on `data`, or undefined (data left out, never shown plain) when it
 * cannot be: create and update refuse such masks, but the request's expression budget can
 * still run out, and one such token must not turn every list of a masking caller into an error.
 */
function maskedValue(mask: unknown, data: unknown, budget?: ExpressionBudget): unknown {
  try {
    return withoutNullFields(evaluateMask(mask, data, 'mask', budget))
  } catch (error) {
    if (error instanceof ValidationError || error instanceof ExpressionBudgetError) return undefined
    throw error
  }
}

/** A card without an expiry shows no `expiration_month: null`: absent stays absent. */
function withoutNullFields(masked: unknown): unknown {
  if (masked === null || typeof masked !== 'object' || Array.isArray(masked)) return masked
  return Object.fromEntries(Object.entries(masked).filter(([, value]) => value !== null))
}

/**
 * Whether `toWireToken` reads the token's data under `transform`, so whether it must be
 * decrypted: a redacted view shows none of it, and neither does a masked view of a token
 * without a mask (the data is left out), such as most tokens of a list read under `mask`.
 */
export function viewReadsData(row: StoredToken, transform: Transform, options: ViewOptions): boolean {
  if (transform === 'reveal') return true
  if (transform === 'mask') return row.mask !== null
  return options.single && getTokenType(row.type)?.showsEvaluatedMask === true
}

export function toWireToken(row: StoredToken, data: unknown, transform: Transform, options: ViewOptions): Token {
  const mask = row.mask === null ? undefined : row.mask
  const token: Token = {
    id: row.id,
    tenant_id: row.tenant_id,
    type: row.type,
    fingerprint: row.fingerprint,
    containers: [...row.containers],
    metadata: { ...row.metadata },
    fingerprint_expression: row.fingerprint_expression,
    created_at: createdAtOf(row)
  }
  const shown = transformData(row, data, transform, options.budget)
  if (shown !== undefined) token.data = shown
  if (mask !== undefined) {
    if (!(options.single && getTokenType(row.type)?.showsEvaluatedMask)) token.mask = mask
    // Masked values are safe to show a masking or revealing caller; a redacting one sees none.
    else if (transform !== 'redact') {
      const values = transform === 'mask' ? shown : maskedData(row, data, options.budget)
      if (values !== undefined) token.mask = values
    }
  }
  if (row.created_by) token.created_by = row.created_by
  if (row.modified_by) token.modified_by = row.modified_by
  if (row.modified_at !== null) token.modified_at = toIsoString(row.modified_at)
  if (row.search_indexes) token.search_indexes = [...row.search_indexes]
  if (row.expires_at !== null) token.expires_at = toIsoString(row.expires_at)
  return token
}

/** What a caller without read access learns about a deduplicated token. */
export function toMinimalToken(row: StoredToken): Token {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    type: row.type,
    fingerprint: row.fingerprint,
    containers: [...row.containers]
  }
}

/** Spec: an update that makes a duplicate, seen by a caller who cannot read the original. */
export function redactForDuplicate(token: Token): Token {
  const { data: _data, metadata: _metadata, fingerprint_expression: _fe, search_indexes: _si, mask: _mask, ...rest } = token
  return rest
}
