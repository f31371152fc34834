/**
 * Turning one create-token request into a token ready to insert: validation,
 * id and fingerprint expressions, access check on the destination containers,
 * and sealing (through `TokenKeys`). Pure CPU work, shared by POST /tokens and POST /tokenize.
 */
import { createTokenBody, INVISIBLE_CHARACTERS, type CreateTokenInput } from '../../shared/contracts'
import type { Transform } from '../../shared/types'
import { requireTokenAccess } from './access'
import type { Actor } from './actor'
import { ValidationError, type FieldErrors } from './errors'
import { checkIdExpression, checkMaskMaximum } from './expression-rules'
import { evaluateExpression, evaluateMask, maskExpressions, renderFingerprintSource, validateExpression, validateMask, type ExpressionBudget } from './expressions'
import { retainShortLived } from './cvc-retention'
import { assertMetadataFreeOfSecrets, holdsSecretNumber, secretsOf } from './metadata-secrets'
import { parseExpiresAt } from './dates'
import { asStoredJson, type SearchIndexEntry, type StoredToken, type TokenKeys } from './token'
import { getTokenType, type TokenTypeDefinition } from './token-types'
import { addFieldError, formatPath, zodFieldErrors } from './validation'

/**
 * Characters a token id may not contain: they break URLs and paths, or (the
 * invisible ones) let an id rendered from an expression pass for another id.
 */
const FORBIDDEN_ID_CHARACTERS = new RegExp(String.raw`[#/\\+?[\]|&=%<>{}^\u0000-\u001f\u007f]|${INVISIBLE_CHARACTERS.source}`, 'u')
const EXPRESSION_MARKER = /\{\{|\{%/

/** What the services need to prepare tokens. */
export interface PrepareContext {
  actor: Actor
  keys: TokenKeys
  now: number
  /** The request's expression budget, shared by every token it prepares. */
  budget: ExpressionBudget
  /** How long a card's CVC is kept (0: never stored); see cvc-retention.ts. */
  cvcRetentionMs: number
}

/** A validated, sealed token waiting to be inserted. */
export interface PreparedToken {
  token: StoredToken
  searchIndexes: SearchIndexEntry[]
  /** The data as stored (without a CVC when the retention window is 0). */
  data: unknown
  type: TokenTypeDefinition
  /** The transform the create grant carries; applied to the response. */
  transform: Transform
  deduplicate: boolean
}

/** The search index entries of a token: each expression evaluated on the data, then hashed. */
export async function searchIndexEntries(
  keys: TokenKeys,
  tenantId: string,
  tokenId: string,
  expressions: readonly string[],
  data: unknown,
  prefix: string,
  budget: ExpressionBudget
): Promise<SearchIndexEntry[]> {
  const entries: SearchIndexEntry[] = []
  for (const [index, expression] of expressions.entries()) {
    await budget.breathe()
    const value = evaluateExpression(expression, { data }, formatPath(['search_indexes', index], prefix), budget)
    const source = typeof value === 'string' ? value : JSON.stringify(value ?? null)
    entries.push({ tenant_id: tenantId, token_id: tokenId, index_hash: keys.indexHash(tenantId, source) })
  }
  return entries
}

/** Validates a token id after any expression has been rendered. */
export function checkTokenId(id: string, field: string): void {
  if (id.length < 3 || id.length > 400) throw ValidationError.field(field, 'must be 3 to 400 characters long')
  if (FORBIDDEN_ID_CHARACTERS.test(id)) throw ValidationError.field(field, 'must not contain # / \\ + ? [ ] | & = % < > { } ^ or control characters')
}

/**
 * The data's text leaves long enough to identify it (strings of 4+ characters,
 * numbers of 6+ digits). An id is a public handle, so it may contain none of
 * them — an id expression like `{{ data }}` or `card-<number>` is refused.
 * (Metadata has its own, narrower rule: metadata-secrets.ts.)
 */
export function plaintextFragments(data: unknown, out: string[] = [], depth = 0): string[] {
  if (typeof data === 'string' && data.length >= 4) out.push(data)
  else if (typeof data === 'number' && String(data).length >= 6) out.push(String(data))
  else if (data !== null && typeof data === 'object' && depth < 64) {
    for (const value of Object.values(data)) plaintextFragments(value, out, depth + 1)
  }
  return out
}

/** Also refuses a card or account number written with separators ("4242-4242-4242-4242"), as metadata does. */
export function assertFreeOfPlaintext(value: string, fragments: readonly string[], type: TokenTypeDefinition, data: unknown, field: string): void {
  if (fragments.some((fragment) => value.includes(fragment)) || holdsSecretNumber(value, type, data)) throw ValidationError.field(field, 'must not contain the token data')
}

function isIdExpression(id: string | undefined): id is string {
  return id !== undefined && EXPRESSION_MARKER.test(id)
}

function resolveId(input: CreateTokenInput, keys: TokenKeys, type: TokenTypeDefinition, data: unknown, field: string, budget: ExpressionBudget): string {
  if (input.id === undefined) return keys.newId()
  let id = input.id
  if (isIdExpression(id)) {
    checkIdExpression(validateExpression(id, field, budget), field)
    const value = evaluateExpression(id, { data: input.data }, field, budget)
    if (value === null || typeof value === 'object') throw ValidationError.field(field, 'the id expression must produce a string or number')
    id = String(value)
  }
  checkTokenId(id, field)
  assertFreeOfPlaintext(id, plaintextFragments(data), type, data, field)
  return id
}

/** Parses a raw request body into create-token input, with errors under `prefix`. */
export function parseCreateToken(body: unknown, prefix = ''): CreateTokenInput {
  const result = createTokenBody.safeParse(body)
  if (!result.success) throw new ValidationError(zodFieldErrors(result.error, prefix))
  return result.data
}

/**
 * Counts the expressions a request gives for one token against the request's budget (the
 * type's defaults are evaluated natively and cost nothing), before any is evaluated.
 * @throws ValidationError naming the field that passes the per-token limit
 * @throws ExpressionCountError naming the field that passes the per-request limit
 */
export function admitExpressions(budget: ExpressionBudget, input: CreateTokenInput, prefix = ''): void {
  // Most requests carry none: nothing to count, and no field paths to build (bulk tokenize admits thousands).
  if (!isIdExpression(input.id) && input.fingerprint_expression === undefined && input.search_indexes === undefined && input.mask === undefined) return
  budget.admit([
    [fieldPath('id', prefix), isIdExpression(input.id) ? 1 : 0],
    [fieldPath('fingerprint_expression', prefix), input.fingerprint_expression === undefined ? 0 : 1],
    [fieldPath('search_indexes', prefix), input.search_indexes?.length ?? 0],
    [fieldPath('mask', prefix), input.mask === undefined ? 0 : maskExpressions(input.mask, fieldPath('mask', prefix)).length]
  ])
}

/*
 * The helpers below are module functions rather than closures inside the functions that use
 * them on every create: the CLI runs under tsx, which names each closure as it is created
 * (esbuild's keepNames, an Object.defineProperty call), and that showed in CPU profiles.
 */

/** A top-level field's path under `prefix`. */
function fieldPath(name: string, prefix: string): string {
  return formatPath([name], prefix)
}

/** Adds a ValidationError's fields to `errors` so every bad field is reported at once; rethrows any other error. */
function collect(errors: FieldErrors, error: unknown): undefined {
  if (!(error instanceof ValidationError)) throw error
  for (const [path, messages] of Object.entries(error.errors ?? {})) messages.forEach((m) => addFieldError(errors, path, m))
  return undefined
}

/**
 * Runs one step of `prepareToken`, its field errors collected (undefined returned). The
 * steps run without an await: the caller gives way first only when the budget asks it to
 * (`mustBreathe`), as every await costs a turn of the microtask queue, several per token.
 */
function attempt<T>(errors: FieldErrors, run: () => T): T | undefined {
  try {
    return run()
  } catch (error) {
    return collect(errors, error)
  }
}

/** `attempt` for the one step that gives way inside (the search indexes). */
async function attemptAsync<T>(errors: FieldErrors, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run()
  } catch (error) {
    return collect(errors, error)
  }
}

/**
 * A custom mask, validated, held to the type's maximum and (with valid data) evaluated
 * once: one that fails on this data would fail every masked read of the token.
 */
async function customMask(budget: ExpressionBudget, errors: FieldErrors, input: unknown, type: TokenTypeDefinition, valid: { data: unknown } | undefined, prefix: string): Promise<unknown> {
  const field = fieldPath('mask', prefix)
  if (budget.mustBreathe()) await budget.breathe()
  const mask = attempt(errors, () => validateMask(input, field, budget))
  if (mask === undefined) return undefined
  if (budget.mustBreathe()) await budget.breathe()
  attempt(errors, () => checkMaskMaximum(mask, type, field))
  if (!valid) return mask
  if (budget.mustBreathe()) await budget.breathe()
  attempt(errors, () => evaluateMask(mask, valid.data, field, budget))
  return mask
}

/**
 * Validates everything that depends on the type and the data, evaluates the
 * id, fingerprint and search-index expressions, checks `token:create` on the
 * destination containers and seals the data. The caller has admitted its expressions
 * (`admitExpressions`). Gives way to other requests between evaluations.
 * @throws ExpressionBudgetError when the request's expression time budget runs out
 */
export async function prepareToken(context: PrepareContext, input: CreateTokenInput, prefix = ''): Promise<PreparedToken> {
  const { budget } = context
  const type = getTokenType(input.type)!
  const now = new Date(context.now)
  const errors: FieldErrors = {}
  // The data as stored (a card's numeric cvc becomes a string); what is invalid is reported with the rest.
  if (budget.mustBreathe()) await budget.breathe()
  const parsed = attempt(errors, () => ({ data: type.parseData(input.data, fieldPath('data', prefix)) }))
  const dataValid = parsed !== undefined
  const data = parsed ? parsed.data : input.data
  if (budget.mustBreathe()) await budget.breathe()
  const id = attempt(errors, () => resolveId(input, context.keys, type, data, fieldPath('id', prefix), budget))
  const metadata = Object.entries(input.metadata ?? {})
  // Only with metadata to check: collecting a large generic token's strings costs time.
  const secrets = dataValid && metadata.length > 0 ? secretsOf(type, data) : undefined
  if (secrets) {
    for (const [key, value] of metadata) {
      if (budget.mustBreathe()) await budget.breathe()
      attempt(errors, () => assertMetadataFreeOfSecrets(value, secrets, formatPath(['metadata', key], prefix)))
    }
  }
  const fingerprintExpression = input.fingerprint_expression ?? type.defaultFingerprintExpression
  if (budget.mustBreathe()) await budget.breathe()
  const fingerprintSource = attempt(errors, () =>
    input.fingerprint_expression === undefined && dataValid
      ? type.defaultFingerprintSource(data)
      : renderFingerprintSource(validateExpression(fingerprintExpression, fieldPath('fingerprint_expression', prefix), budget), data, input.metadata, budget, fieldPath('fingerprint_expression', prefix))
  )
  const mask = input.mask === undefined ? type.defaultMask : await customMask(budget, errors, input.mask, type, dataValid ? { data } : undefined, prefix)
  const expiresAt = input.expires_at === undefined ? undefined : attempt(errors, () => parseExpiresAt(input.expires_at, fieldPath('expires_at', prefix), now))
  const indexExpressions = input.search_indexes ?? []
  for (const [index, expression] of indexExpressions.entries()) {
    if (budget.mustBreathe()) await budget.breathe()
    attempt(errors, () => validateExpression(expression, formatPath(['search_indexes', index], prefix), budget))
  }
  const searchIndexes =
    id === undefined || indexExpressions.length === 0
      ? []
      : ((await attemptAsync(errors, () => searchIndexEntries(context.keys, context.actor.tenantId, id, indexExpressions, data, prefix, budget))) ?? [])
  if (Object.keys(errors).length > 0 || id === undefined || fingerprintSource === undefined) throw new ValidationError(errors)

  const containers = input.containers ?? type.defaultContainers
  const transform = requireTokenAccess(context.actor, 'token:create', { id, containers })
  const tenantId = context.actor.tenantId
  // Fingerprint and indexes above saw the whole data; what is sealed may drop the CVC.
  const stored = retainShortLived(type, data, context.now, context.cvcRetentionMs)
  // Field by field: V8 defines each property written after a spread one at a time, on every create.
  const sealed = context.keys.seal(tenantId, id, stored.data)
  return {
    token: {
      tenant_id: tenantId,
      id,
      type: type.name,
      key_version: sealed.key_version,
      sealed_data: sealed.sealed_data,
      fingerprint: context.keys.fingerprint(tenantId, type.name, fingerprintSource),
      fingerprint_expression: fingerprintExpression,
      mask: mask === undefined ? null : mask === type.defaultMask ? mask : asStoredJson(mask),
      containers,
      metadata: Object.fromEntries(Object.entries(input.metadata ?? {})),
      search_indexes: input.search_indexes ?? null,
      expires_at: expiresAt ? expiresAt.getTime() : null,
      cvc_expires_at: stored.expiresAt,
      created_by: context.actor.id,
      created_at: context.now,
      modified_by: null,
      modified_at: null
    },
    searchIndexes,
    data: stored.data,
    type,
    transform,
    deduplicate: input.deduplicate_token === true
  }
}
