/**
 * `POST /detokenize` (Basis Theory's): any JSON body whose strings hold
 * `{{ ID | filters }}` (the token's data) or `{{ token: ID | filters }}` (the
 * token object). Tokens are read as `GET /tokens/{id}` shows them to the caller,
 * so its transform applies; each token read is audited. Every expression counts
 * against the request's expression budget, filters are checked before any
 * token is read, and the response's size is bounded.
 */
import type { Actor } from '../domain/actor'
import { holdsPermission } from '../domain/access'
import { DetokenizedSize, fillDetokenized, parseDetokenizeBody, type TokenReference } from '../domain/detokenize'
import { ForbiddenError, ValidationError, type FieldErrors } from '../domain/errors'
import { ExpressionBudget, evaluateExpression, validateExpression } from '../domain/expressions'
import { addFieldError } from '../domain/validation'
import type { Token } from '../../shared/types'
import type { TokensService } from './tokens.service'

export class DetokenizeService {
  constructor(private readonly tokens: TokensService) {}

  async run(actor: Actor, body: unknown): Promise<unknown> {
    // Rules decide per token; a caller who may read no token at all is refused outright.
    if (!holdsPermission(actor, 'token:read')) throw new ForbiddenError('The caller lacks the token:read permission.')
    const budget = new ExpressionBudget()
    const { shape, references, errors } = parseDetokenizeBody(body, budget)
    // Malformed expressions and bad filters are answered together, before any token is read.
    await eachCollectingErrors(references, budget, (reference) => {
      if (reference.filterSource) validateExpression(reference.filterSource, reference.field, budget)
    }, errors)
    const ids = [...new Set(references.map((reference) => reference.id))]
    const { tokens, missing } = await this.tokens.getMany(actor, ids, budget, 'Token detokenized')
    // Basis Theory answers an unknown token with 400 (its SDK expects it), not 404.
    if (missing.length > 0) throw unknownTokens(references, new Set(missing))
    const values = new Map<TokenReference, unknown>()
    const size = new DetokenizedSize()
    await eachCollectingErrors(references, budget, (reference) => {
      const value = valueOf(reference, tokens.get(reference.id)!, budget)
      size.add(reference.field, value)
      values.set(reference, value)
    })
    return fillDetokenized(shape, (reference) => values.get(reference))
  }
}

/** What a reference stands for: the token object or its data (null when the caller's transform shows none), through its filters. */
function valueOf(reference: TokenReference, token: Token, budget: ExpressionBudget): unknown {
  const value = reference.kind === 'token' ? token : (token.data ?? null)
  if (!reference.filterSource) return value
  return evaluateExpression(reference.filterSource, { data: value }, reference.field, budget)
}

/** Runs `step` on every reference, yielding between them, and throws their field errors (added to `errors`) together. */
async function eachCollectingErrors(
  references: TokenReference[],
  budget: ExpressionBudget,
  step: (reference: TokenReference) => void,
  errors: FieldErrors = {}
): Promise<void> {
  for (const reference of references) {
    await budget.breathe()
    try {
      step(reference)
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      for (const [field, messages] of Object.entries(error.errors ?? {})) messages.forEach((message) => addFieldError(errors, field, message))
    }
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
}

function unknownTokens(references: TokenReference[], missing: Set<string>): ValidationError {
  const errors: FieldErrors = {}
  for (const reference of references) {
    if (missing.has(reference.id)) addFieldError(errors, reference.field, 'names a token that does not exist')
  }
  return new ValidationError(errors)
}
