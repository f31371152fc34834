/**
 * What expressions may show (docs/security.md, "Expressions"). Ids and masks are stored
 * or returned in the clear, so what they show of the token data is decided on the parsed
 * template, never by evaluating it on the data: the answer depends only on the
 * expression and the token type, so a refusal tells nothing about the data.
 *
 * Every place a template reads a variable is a reference. A reference whose value goes
 * straight into a masking filter with literal arguments (`reveal_last: 4`, `card_mask`, …)
 * shows a window of it (the first and last characters); one that goes straight into an
 * alias filter shows nothing of it (`alias_card` keeps the first digit); any other
 * reference — bare, behind another filter, in a filter argument, an operator, a tag's
 * condition or loop, a computed key — may show all of it.
 */
import { Tag, TypeGuards, Value, toValueSync, type Template } from 'liquidjs'
import { ValidationError, type FieldErrors } from './errors'
import { isOutputEscape, maskExpressions, parseExpression } from './expressions'
import type { TokenTypeDefinition } from './token-types'
import { addFieldError } from './validation'

/** How many characters may show at the start and at the end of a value. */
export interface Window {
  first: number
  last: number
}

/** One place a template reads a variable. */
export interface Reference {
  /** The root name then the keys (`['data', 'number']`); undefined when a key is computed at run time. */
  path: readonly (string | number)[] | undefined
  /** What of the value can reach the output: a window of it, or all of it. */
  shows: Window | 'all'
  /** Whether the value goes through an alias filter (random output, nothing to reverse). */
  aliased: boolean
}

/** What the masking filters leave visible, by their literal arguments; undefined when they are not literals. */
const MASKING_FILTERS: Record<string, (args: unknown[]) => Window | undefined> = {
  last4: () => ({ first: 0, last: 4 }),
  reveal_last: ([last]) => (Number.isInteger(last) ? { first: 0, last: last as number } : undefined),
  reveal: ([first, last]) => (Number.isInteger(first) && Number.isInteger(last) ? { first: first as number, last: last as number } : undefined),
  card_mask: () => ({ first: 6, last: 4 }),
  // Eight digits for card numbers of 16 or more; the analysis cannot know the length.
  card_bin: () => ({ first: 8, last: 0 })
}

const ALIAS_FILTERS: Record<string, Window> = {
  alias_card: { first: 1, last: 0 },
  alias_preserve_format: { first: 0, last: 0 },
  alias_preserve_length: { first: 0, last: 0 }
}

type LiquidToken = { kind?: number; content?: unknown }

function literalKey(token: unknown): string | number | undefined {
  if (TypeGuards.isWordToken(token) || TypeGuards.isQuotedToken(token)) return token.content
  if (TypeGuards.isNumberToken(token)) return (token as LiquidToken).content as number
  return undefined
}

/** The literal value of a filter argument, or undefined when it is computed (or named). */
function literalArgument(arg: unknown): unknown {
  if (TypeGuards.isNumberToken(arg) || TypeGuards.isQuotedToken(arg)) return (arg as LiquidToken).content
  return undefined
}

/** A property access that reads the scope (not a property of a literal); its path or undefined when computed. */
function scopePath(token: unknown): { path: Reference['path'] } | undefined {
  if (!TypeGuards.isPropertyAccessToken(token) || token.variable) return undefined
  const keys = token.props.map(literalKey)
  return { path: keys.includes(undefined) ? undefined : (keys as (string | number)[]) }
}

/** Every scope read inside a token, an expression or a filtered value, all showing everything. */
function* unmaskedReferences(node: unknown): Generator<Reference> {
  if (node === null || typeof node !== 'object') return
  if (Array.isArray(node)) {
    for (const item of node) yield* unmaskedReferences(item)
  } else if (node instanceof Value || TypeGuards.isFilteredValueToken(node)) {
    yield* unmaskedReferences(node.initial.postfix)
    for (const filter of node.filters) yield* unmaskedReferences(filter.args)
  } else if (TypeGuards.isPropertyAccessToken(node)) {
    const read = scopePath(node)
    if (read) yield { path: read.path, shows: 'all', aliased: false }
    yield* unmaskedReferences(node.variable)
    yield* unmaskedReferences(node.props)
  } else if (TypeGuards.isRangeToken(node)) {
    yield* unmaskedReferences([node.lhs, node.rhs])
  } else if ('postfix' in node) {
    yield* unmaskedReferences(node.postfix)
  }
}

/** Whether a path ends by picking one character out of a string (`s[3]`, `s.first`): a window over it would show that character. */
function picksCharacter(path: readonly (string | number)[]): boolean {
  const last = path[path.length - 1]
  return typeof last === 'number' || last === 'first' || last === 'last'
}

/** The references of one filtered value: `{{ data.number | card_mask }}` reads data.number through a window. */
function* valueReferences(value: Value): Generator<Reference> {
  const filters = value.filters.filter((filter) => !isOutputEscape(filter))
  const read = value.initial.postfix.length === 1 ? scopePath(value.initial.postfix[0]) : undefined
  const [first] = filters
  if (!read || read.path === undefined || picksCharacter(read.path) || !first) return yield* unmaskedReferences(value)
  const alias = ALIAS_FILTERS[first.name]
  const masked = MASKING_FILTERS[first.name]?.(first.args.map(literalArgument))
  const window = alias ?? masked
  if (!window) return yield* unmaskedReferences(value)
  yield { path: read.path, shows: window, aliased: alias !== undefined }
  for (const filter of filters) yield* unmaskedReferences(filter.args)
}

interface Analysis {
  references: Reference[]
  /** Names of the tags the template uses. */
  tags: string[]
}

const analyses = new WeakMap<readonly Template[], Analysis>()

type AnalysableNode = Template & {
  arguments?: () => Iterable<unknown>
  children?: (partials: boolean, sync: boolean) => Generator<unknown, Template[]>
}

/** Walks the parsed template with the protocol liquidjs's own static analysis uses (arguments and children). */
function analyse(source: string, field: string): Analysis {
  const templates = parseExpression(source, field)
  const cached = analyses.get(templates)
  if (cached) return cached
  const analysis: Analysis = { references: [], tags: [] }
  const visit = (node: AnalysableNode): void => {
    if (node instanceof Tag) analysis.tags.push((node.token as unknown as { name: string }).name)
    for (const argument of node.arguments?.() ?? []) {
      analysis.references.push(...(argument instanceof Value ? valueReferences(argument) : unmaskedReferences(argument)))
    }
    if (node.children) for (const child of toValueSync(node.children(false, true))) visit(child as AnalysableNode)
  }
  for (const template of templates) visit(template as AnalysableNode)
  analyses.set(templates, analysis)
  return analysis
}

/** References to the token data: their path below `data` (undefined when computed). */
function dataReferences(source: string, field: string): (Reference & { keys: readonly (string | number)[] | undefined })[] {
  return analyse(source, field)
    .references.filter((ref) => ref.path === undefined || ref.path[0] === 'data')
    .map((ref) => ({ ...ref, keys: ref.path?.slice(1) }))
}

const within = (shown: Window | 'all', limit: Window): boolean => shown !== 'all' && shown.first <= limit.first && shown.last <= limit.last

/**
 * Ids are stored and logged in the clear: an id expression may use the token data only
 * through an alias filter, and no tags. Every token type alike.
 * @throws ValidationError naming `field`
 */
export function checkIdExpression(source: string, field: string): void {
  const { references, tags } = analyse(source, field)
  if (tags.length > 0) throw ValidationError.field(field, 'an id expression may not use tags ({% … %}), only text and {{ … }} outputs')
  if (references.some((ref) => !ref.aliased)) {
    throw ValidationError.field(field, 'an id is stored and logged in the clear: it may use the token data only through alias_card, alias_preserve_format or alias_preserve_length')
  }
}

function describeLimit(key: string, limit: Window): string {
  if (limit.first === 0 && limit.last === 0) return `must not show data.${key}`
  const parts = [limit.first > 0 ? `the first ${limit.first}` : '', limit.last > 0 ? `the last ${limit.last}` : ''].filter(Boolean).join(' and ')
  return `must not show more of data.${key} than ${parts} characters`
}

/** Why one reference shows more of a protected field than `maximum` allows; undefined when it does not. */
function beyondMaximum(ref: ReturnType<typeof dataReferences>[number], maximum: NonNullable<TokenTypeDefinition['maskMaximum']>): string | undefined {
  const { keys } = ref
  if (keys === undefined) return `must name the data fields literally (${Object.keys(maximum).map((key) => `data.${key}`).join(', ')} are protected)`
  if (keys.length === 0) return `must not use the whole data: it holds ${Object.keys(maximum).map((key) => `data.${key}`).join(' and ')}`
  const limit = Object.hasOwn(maximum, keys[0]) ? maximum[keys[0]] : undefined
  if (!limit) return undefined
  if (keys.length > 1 || !within(ref.shows, limit)) return describeLimit(String(keys[0]), limit)
  return undefined
}

/**
 * A mask of a type with protected fields (card, bank) never shows more of them than the
 * type allows (card number: first 6 and last 4 digits; CVC: nothing; bank account
 * number: last 4), whoever sets it.
 * @throws ValidationError naming each offending leaf
 */
export function checkMaskMaximum(mask: unknown, type: TokenTypeDefinition, field: string): void {
  const maximum = type.maskMaximum
  if (!maximum) return
  const errors: FieldErrors = {}
  for (const { source, path } of maskExpressions(mask, field)) {
    const problems = new Set(dataReferences(source, path).map((ref) => beyondMaximum(ref, maximum)))
    for (const problem of problems) if (problem) addFieldError(errors, path, problem)
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
}

const shownAsIsByDefault = new WeakMap<TokenTypeDefinition, Set<string>>()

/** The data fields the type's default mask shows as they are (a card's expiry, a bank's routing number). */
function fieldsShownAsIs(type: TokenTypeDefinition): Set<string> {
  let fields = shownAsIsByDefault.get(type)
  if (!fields) {
    const refs = type.defaultMask === undefined ? [] : maskExpressions(type.defaultMask, 'mask').flatMap(({ source, path }) => dataReferences(source, path))
    fields = new Set(refs.filter((ref) => ref.shows === 'all' && ref.keys).map((ref) => JSON.stringify(ref.keys)))
    shownAsIsByDefault.set(type, fields)
  }
  return fields
}

/**
 * Whether the type bounds what `ref` shows: a field it protects with a mask maximum (a card
 * number, a bank account number) through a window within that maximum, which the default mask
 * shows no less of. Only there does a masking window always hide something: on any other field
 * a value no longer than the window (a 4-digit PIN through `last4`, an 11-character SSN through
 * `reveal: 8, 4`) shows whole.
 */
function boundedByType(ref: ReturnType<typeof dataReferences>[number], type: TokenTypeDefinition): boolean {
  const field = ref.keys?.length === 1 ? ref.keys[0] : undefined
  const limit = type.maskMaximum && field !== undefined && Object.hasOwn(type.maskMaximum, field) ? type.maskMaximum[field] : undefined
  return limit !== undefined && within(ref.shows, limit)
}

/**
 * The leaves (from `maskExpressions`) that may show some token data as it is: a data reference
 * that goes neither through an alias filter nor through a masking window the type bounds
 * (`boundedByType`), unless the type's default mask shows that field as is too. Setting such a
 * leaf needs the right to reveal the token.
 */
export function leavesShowingData(leaves: readonly { source: string; path: string }[], type: TokenTypeDefinition): string[] {
  const asIs = fieldsShownAsIs(type)
  return leaves
    .filter(({ source, path }) => dataReferences(source, path).some((ref) => !ref.aliased && !boundedByType(ref, type) && !(ref.keys && asIs.has(JSON.stringify(ref.keys)))))
    .map(({ path }) => path)
}
