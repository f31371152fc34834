/**
 * The token object a caller sees (spec "Token object"), shaped by the
 * caller's transform: redact drops `data`, mask shows the evaluated mask (or
 * drops `data` when the token has none), reveal shows the plaintext.
 */
import type { Token, Transform } from '../../shared/types'
import type { TokenRow } from '../storage/repositories/tokens.repository'
import { toIsoString } from './dates'
import { ExpressionBudgetError, ValidationError } from './errors'
import { checkMaskMaximum } from './expression-rules'
import { evaluateMask, type ExpressionBudget } from './expressions'
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

/** A row's JSON columns, parsed. Shared between reads of a cached row: never mutate. */
export interface ParsedColumns {
  containers: readonly string[]
  metadata: Readonly<Record<string, string>>
  mask: unknown
  searchIndexes: readonly string[] | undefined
  createdAt: string
}

const parsedByRow = new WeakMap<TokenRow, ParsedColumns>()

/** Parses a row's JSON columns once per row object: hot rows come from the cache again and again. */
export function columnsOf(row: TokenRow): ParsedColumns {
  let parsed = parsedByRow.get(row)
  if (!parsed) {
    parsed = {
      containers: JSON.parse(row.containers),
      metadata: JSON.parse(row.metadata),
      mask: row.mask === null ? undefined : JSON.parse(row.mask),
      searchIndexes: row.search_indexes === null ? undefined : JSON.parse(row.search_indexes),
      createdAt: toIsoString(Number(row.created_at))
    }
    parsedByRow.set(row, parsed)
  }
  return parsed
}

function maskOf(row: TokenRow): unknown {
  return columnsOf(row).mask
}

/** The value of `data` under a transform; undefined means the field is left out. */
export function transformData(row: TokenRow, data: unknown, transform: Transform, budget?: ExpressionBudget): unknown {
  if (transform === 'reveal') return data
  if (transform === 'redact') return undefined
  return maskedData(row, data, budget)
}

/**
 * The masked view of `data` (undefined when the token has no mask): the type's default mask
 * natively, or the stored mask evaluated — unless it shows more of a card or bank than the
 * type allows (a mask stored before that rule existed), which reads as the default mask.
 */
function maskedData(row: TokenRow, data: unknown, budget?: ExpressionBudget): unknown {
  const mask = maskOf(row)
  if (mask === undefined) return undefined
  const type = getTokenType(row.type)
  if (type?.applyDefaultMask && (row.mask === defaultMaskJson(type) || !withinMaximum(row, type))) return type.applyDefaultMask(data)
  return maskedValue(mask, data, budget)
}

const withinMaximumByRow = new WeakMap<TokenRow, boolean>()

/** Whether a row's mask keeps within its type's maximum; remembered per row object, as hot rows are read again and again. */
function withinMaximum(row: TokenRow, type: TokenTypeDefinition): boolean {
  let within = withinMaximumByRow.get(row)
  if (within === undefined) {
    try {
      checkMaskMaximum(maskOf(row), type, 'mask')
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

/** The type's default mask as stored in a row (`prepareToken` stores it with JSON.stringify). */
function defaultMaskJson(type: TokenTypeDefinition): string {
  let json = defaultMaskJsonByType.get(type)
  if (json === undefined) defaultMaskJsonByType.set(type, (json = JSON.stringify(type.defaultMask)))
  return json
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

export function toWireToken(row: TokenRow, data: unknown, transform: Transform, options: ViewOptions): Token {
  const columns = columnsOf(row)
  const mask = columns.mask
  const token: Token = {
    id: row.id,
    tenant_id: row.tenant_id,
    type: row.type,
    fingerprint: row.fingerprint,
    containers: [...columns.containers],
    metadata: { ...columns.metadata },
    fingerprint_expression: row.fingerprint_expression,
    created_at: columns.createdAt
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
  if (row.modified_at !== null) token.modified_at = toIsoString(Number(row.modified_at))
  if (columns.searchIndexes) token.search_indexes = [...columns.searchIndexes]
  if (row.expires_at !== null) token.expires_at = toIsoString(Number(row.expires_at))
  return token
}

/** What a caller without read access learns about a deduplicated token (DESIGN §5). */
export function toMinimalToken(row: TokenRow): Token {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    type: row.type,
    fingerprint: row.fingerprint,
    containers: [...columnsOf(row).containers]
  }
}

/** Spec: an update that makes a duplicate, seen by a caller who cannot read the original. */
export function redactForDuplicate(token: Token): Token {
  const { data: _data, metadata: _metadata, fingerprint_expression: _fe, search_indexes: _si, mask: _mask, ...rest } = token
  return rest
}
