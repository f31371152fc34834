/**
 * Liquid expressions: one sandboxed liquidjs engine with Tessera's filters,
 * a bounded cache of parsed templates, type-preserving evaluation of single outputs,
 * and the limits that bound what expressions cost, per evaluation and per request.
 */
import { randomInt } from 'node:crypto'
import { setImmediate } from 'node:timers/promises'
import { Context, Liquid, LiquidError, Output, TokenKind, Value, toValue, toValueSync, type Filter as LiquidFilter, type Template } from 'liquidjs'
import { ExpressionBudgetError, ValidationError, type FieldErrors } from './errors'
import { luhnValid } from '../../shared/token-rules'

/** A filter misuse; its message is safe to return (names the filter, never the value). */
class FilterError extends Error {}

/** How liquidjs calls a filter: `context` is the evaluation's, with its memory limiter. */
type FilterThis = { context: Context }

/** Charges the characters a filter reads or writes to the evaluation's memory limit, so big data cannot loop for free. */
function charge(self: FilterThis, value: unknown): void {
  if (typeof value === 'string') self.context.memoryLimit.use(value.length)
}

/**
 * Liquid would print objects as "[object Object]" and join arrays, so distinct data could
 * render (and fingerprint) alike; JSON keeps them distinct.
 */
function escapeOutput(this: FilterThis, value: unknown): string {
  const v = toValue(value)
  const text = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)
  charge(this, text)
  return text
}

const engine = new Liquid({
  strictFilters: true,
  ownPropertyOnly: true,
  // No file system: an empty in-memory template map, and the tags that load templates refuse to parse.
  templates: {},
  parseLimit: 20_000,
  timezoneOffset: 0,
  locale: 'en-US',
  outputEscape: escapeOutput
})
for (const tag of ['include', 'render', 'layout']) {
  engine.registerTag(tag, {
    parse() {
      throw new Error(`the ${tag} tag is not allowed`)
    },
    render() {}
  })
}

// ---------------------------------------------------------------------------------------------
// Filters. Each validates its arguments before looking at its input, so a dry run with null
// data (see validateExpression) catches argument errors. A null or missing input gives null.

type Filter = (value: unknown, ...args: unknown[]) => unknown

const MAX_LENGTH_ARG = 1_000

function arity(name: string, args: unknown[], min: number, max = min): void {
  if (args.length >= min && args.length <= max) return
  const expected = min === max ? `${min}` : `${min} to ${max}`
  throw new FilterError(`${name} expects ${expected} argument${max === 1 ? '' : 's'}, got ${args.length}`)
}

function intArg(name: string, label: string, value: unknown, min = 0, max = MAX_LENGTH_ARG): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value
  throw new FilterError(`${name}: ${label} must be an integer from ${min} to ${max}`)
}

function charArg(name: string, label: string, value: unknown): string {
  if (typeof value === 'string' && [...value].length === 1) return value
  throw new FilterError(`${name}: ${label} must be a single character`)
}

function textInput(name: string, value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  throw new FilterError(`${name} expects a string or number input`)
}

function cardInput(name: string, value: unknown): string {
  const digits = textInput(name, value)
  if (/^\d{13,19}$/.test(digits)) return digits
  throw new FilterError(`${name} expects a card number of 13 to 19 digits`)
}

const isNil = (value: unknown): value is null | undefined => value === null || value === undefined

/** Registers `impl` under `name`: arguments checked by `check`, null input passed through, text charged. */
function filter(name: string, check: (args: unknown[]) => void, impl: Filter): void {
  engine.registerFilter(name, function (this: FilterThis, value: unknown, ...args: unknown[]) {
    check(args)
    value = toValue(value)
    if (isNil(value)) return null
    charge(this, value)
    const result = impl(value, ...args)
    charge(this, result)
    return result
  })
}

const noArgs = (name: string) => (args: unknown[]) => arity(name, args, 0)

function maskAllBut(chars: string[], first: number, last: number, maskChar: string): string {
  if (first + last >= chars.length) return chars.join('')
  return chars.slice(0, first).join('') + maskChar.repeat(chars.length - first - last) + chars.slice(chars.length - last).join('')
}

const DIGITS = '0123456789'
const LOWER = 'abcdefghijklmnopqrstuvwxyz'
const UPPER = LOWER.toUpperCase()
const ALPHANUMERIC = DIGITS + LOWER + UPPER
const pick = (alphabet: string) => alphabet[randomInt(alphabet.length)]

/** Parses `a.b[0]['c d']` (optionally prefixed by `$`) into keys. */
function parseJsonPath(path: unknown): string[] {
  if (typeof path !== 'string') throw new FilterError('json: path must be a string')
  const keys: string[] = []
  const segment = /\.?([^.[\]'"]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/y
  let pos = path.startsWith('$') ? 1 : 0
  while (pos < path.length) {
    segment.lastIndex = pos
    const m = segment.exec(path)
    // A bare name is only allowed first; later ones need a dot.
    if (!m || (m[1] !== undefined && pos > 0 && path[pos] !== '.')) throw new FilterError(`json: invalid path ${JSON.stringify(path)}`)
    keys.push(m[1] ?? m[2] ?? m[3] ?? m[4])
    pos = segment.lastIndex
  }
  return keys
}

filter('stringify', noArgs('stringify'), (v) => JSON.stringify(v))
filter('last4', noArgs('last4'), (v) => [...textInput('last4', v)].slice(-4).join(''))
filter(
  'reveal_last',
  (args) => {
    arity('reveal_last', args, 1, 2)
    intArg('reveal_last', 'n', args[0])
    if (args.length > 1) charArg('reveal_last', 'mask_char', args[1])
  },
  (v, n, maskChar = 'X') => maskAllBut([...textInput('reveal_last', v)], 0, n as number, maskChar as string)
)
filter(
  'reveal',
  (args) => {
    arity('reveal', args, 2, 3)
    intArg('reveal', 'first', args[0])
    intArg('reveal', 'last', args[1])
    if (args.length > 2) charArg('reveal', 'mask_char', args[2])
  },
  (v, first, last, maskChar = 'X') => maskAllBut([...textInput('reveal', v)], first as number, last as number, maskChar as string)
)
filter(
  'json',
  (args) => {
    arity('json', args, 1)
    parseJsonPath(args[0])
  },
  (v, path) => {
    let current: unknown = v
    if (typeof v === 'string') {
      try {
        current = JSON.parse(v)
      } catch {
        throw new FilterError('json: input is not valid JSON')
      }
    }
    for (const key of parseJsonPath(path)) {
      if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return null
      current = (current as Record<string, unknown>)[key]
    }
    return current ?? null
  }
)
for (const [name, pad] of [
  ['pad_left', (s: string, n: number, c: string) => c.repeat(Math.max(0, n - [...s].length)) + s],
  ['pad_right', (s: string, n: number, c: string) => s + c.repeat(Math.max(0, n - [...s].length))]
] as const) {
  filter(
    name,
    (args) => {
      arity(name, args, 2)
      intArg(name, 'len', args[0])
      charArg(name, 'char', args[1])
    },
    (v, len, char) => pad(textInput(name, v), len as number, char as string)
  )
}
// ASCII letters and digits are replaced; everything else (separators, other scripts) is kept.
filter('alias_preserve_format', noArgs('alias_preserve_format'), (v) =>
  textInput('alias_preserve_format', v).replace(/[0-9]|[a-z]|[A-Z]/g, (c) =>
    pick(c <= '9' ? DIGITS : c <= 'Z' ? UPPER : LOWER)
  )
)
filter('alias_preserve_length', noArgs('alias_preserve_length'), (v) =>
  Array.from(textInput('alias_preserve_length', v), () => pick(ALPHANUMERIC)).join('')
)
// Keeps only the first digit (the card network) so aliases still look like the same brand
// without revealing the issuer; the last digit is chosen so the alias passes the Luhn check.
filter('alias_card', noArgs('alias_card'), (v) => {
  const digits = cardInput('alias_card', v)
  let payload = digits[0]
  for (let i = 2; i < digits.length; i++) payload += pick(DIGITS)
  for (let check = 0; ; check++) if (luhnValid(payload + check)) return payload + check
})
// First 6 and last 4 digits: the most PCI DSS allows to be shown for any PAN length.
filter('card_mask', noArgs('card_mask'), (v) => maskAllBut([...cardInput('card_mask', v)], 6, 4, 'X'))
// ISO/IEC 7812 moved to 8-digit IINs; PCI DSS allows the first 8 digits only for PANs of 16+ digits.
filter('card_bin', noArgs('card_bin'), (v) => {
  const digits = cardInput('card_bin', v)
  return digits.slice(0, digits.length >= 16 ? 8 : 6)
})
filter('to_string', noArgs('to_string'), (v) => (typeof v === 'object' ? JSON.stringify(v) : String(v)))
filter('to_number', noArgs('to_number'), (v) => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN
  if (!Number.isFinite(n)) throw new FilterError('to_number: input is not a number')
  return n
})
filter('to_boolean', noArgs('to_boolean'), (v) => {
  if (typeof v === 'boolean') return v
  if (typeof v === 'number') return v !== 0
  const s = typeof v === 'string' ? v.trim().toLowerCase() : undefined
  if (s === 'true' || s === '1') return true
  if (s === 'false' || s === '0') return false
  throw new FilterError('to_boolean: input must be true, false, 1 or 0')
})

// ---------------------------------------------------------------------------------------------
// Limits. Each evaluation has its own step and memory limits, counted rather than timed, so
// a loop cannot run long however loaded the machine is; every parse and evaluation of a
// request draws on one ExpressionBudget of time, so many expressions cannot add up.

/** What expressions may cost (docs/api-decisions.md, "Expression limits"). */
export interface ExpressionLimits {
  /** Expressions one token may carry: an id expression, a fingerprint_expression, search indexes and mask leaves. */
  perToken: number
  /** Expressions one request may carry (a whole /tokenize body). */
  perRequest: number
  /** Liquid steps (each output, tag and loop iteration) of one evaluation; the leaves of a mask are one evaluation. */
  steps: number
  /** Characters, array items and range sizes one evaluation may read or build (Liquid's memory accounting, and ours). */
  memory: number
  /** Milliseconds every parse and evaluation of one request may take together. */
  requestMs: number
}

export const EXPRESSION_LIMITS: Readonly<ExpressionLimits> = Object.freeze({
  perToken: 64,
  perRequest: 10_000,
  steps: 1_000,
  memory: 200_000,
  requestMs: 500
})

/** A request working through many expressions gives way to other requests this often (milliseconds). */
const BREATHE_EVERY_MS = 2

/** The slice of expression work the event loop grants in this turn, shared by all requests (see `ExpressionBudget.breathe`). */
let currentSlice: { owner: object | undefined; endsAt: number } = { owner: undefined, endsAt: 0 }
let sliceGrantedThisTurn = false

/** Passing the per-request count: it ends the request (the rest of a /tokenize body is not looked at). */
export class ExpressionCountError extends ValidationError {}

/** Thrown by the limiters of an Evaluation; liquidjs wraps it, `runtimeError` unwraps it. */
class LimitError extends Error {}

/** The message of a LimitError thrown when the request's time budget runs out. */
const OUT_OF_TIME = 'out of time'

/**
 * The limits of one evaluation, as the render and memory limiters liquidjs's Context
 * takes (it calls `renderLimit.check()` before each template it renders, and
 * `memoryLimit.use(n)` where it allocates; our filters charge what they read and write).
 */
class Evaluation {
  private steps = 0
  private memory = 0

  constructor(
    private readonly limits: ExpressionLimits,
    /** When the request's time budget runs out (performance.now()). */
    private readonly deadline: number
  ) {}

  // liquidjs passes its own clock reading, which may be Date.now(): read ours.
  private readonly renderLimit = {
    check: (): void => {
      if (++this.steps > this.limits.steps) throw new LimitError(`takes more than ${this.limits.steps} steps to evaluate`)
      if (performance.now() > this.deadline) throw new LimitError(OUT_OF_TIME)
    }
  }

  private readonly memoryLimit = {
    use: (count: number): void => {
      if (!(count > 0)) return
      this.memory += count
      if (this.memory > this.limits.memory) throw new LimitError(`uses more than the ${this.limits.memory} units of memory one evaluation may use`)
    }
  }

  context(scope: Record<string, unknown>): Context {
    const limiters = { liquid: engine, renderLimit: this.renderLimit, memoryLimit: this.memoryLimit }
    return new Context(scope, engine.options, { sync: true }, limiters as unknown as ConstructorParameters<typeof Context>[3])
  }
}

/**
 * What one request may spend on expressions: a count of the expressions it carries and
 * one time budget shared by all its parses and evaluations. Create one per request.
 */
export class ExpressionBudget {
  private counted = 0
  private spentMs = 0
  /** Time spent on the request's other work between evaluations (see `worked`). */
  private workedMs = 0

  constructor(readonly limits: ExpressionLimits = EXPRESSION_LIMITS) {}

  /**
   * Counts the expressions of one token, given per field in the order they are evaluated.
   * @throws ValidationError naming the field that passes the per-token limit
   * @throws ExpressionCountError naming the field that passes the per-request limit
   */
  admit(fields: ReadonlyArray<readonly [field: string, count: number]>): void {
    let token = 0
    for (const [field, count] of fields) {
      token += count
      if (token > this.limits.perToken) {
        throw ValidationError.field(field, `a token may carry at most ${this.limits.perToken} expressions (id, fingerprint_expression, search_indexes and mask leaves together)`)
      }
      if (this.counted + token > this.limits.perRequest) {
        throw new ExpressionCountError({ [field]: [`a request may carry at most ${this.limits.perRequest} expressions`] })
      }
    }
    this.counted += token
  }

  /**
   * Whether `breathe` would give way now. Hot loops test it first and await `breathe` only
   * when it is true: an await costs a turn of the microtask queue even when nothing waits.
   */
  mustBreathe(): boolean {
    // A request that has spent less than a slice (nearly every request) never waits.
    if (this.spentMs + this.workedMs < BREATHE_EVERY_MS) return false
    return !(currentSlice.owner === this && performance.now() < currentSlice.endsAt)
  }

  /**
   * Charges work other than expressions that the request does between them (sealing the
   * tokens of a bulk request): it counts towards giving way in slices, not against the
   * expression time budget, so a request with many tokens but no expressions gives way too.
   */
  worked(ms: number): void {
    this.workedMs += ms
  }

  /**
   * Await it between evaluations. Once a request has spent a slice (a few
   * milliseconds) on expressions, its further work runs in slices, one slice
   * per turn of the event loop whatever the number of requests evaluating:
   * when its slice is used up, or another request holds the current one, it
   * gives way and waits for a turn with a free slice. So hostile bodies,
   * however many arrive at once, delay every other request by about one slice
   * per turn, and requests with little expression work never wait.
   */
  async breathe(): Promise<void> {
    if (!this.mustBreathe()) return
    for (;;) {
      await setImmediate()
      const now = performance.now()
      if (!sliceGrantedThisTurn && (currentSlice.owner === this || now >= currentSlice.endsAt)) {
        currentSlice = { owner: this, endsAt: now + BREATHE_EVERY_MS }
        sliceGrantedThisTurn = true
        // Queued now, it runs first in the next turn's check phase, before the requests still waiting.
        globalThis.setImmediate(() => (sliceGrantedThisTurn = false))
        return
      }
    }
  }

  /**
   * Runs one parse or evaluation with what is left of the time budget, and charges its time.
   * @throws ExpressionBudgetError (413) naming `field` when nothing is left
   */
  spend<T>(field: string, work: (evaluation: Evaluation) => T): T {
    const start = performance.now()
    const left = this.limits.requestMs - this.spentMs
    if (left <= 0) throw new ExpressionBudgetError(field, this.limits.requestMs)
    try {
      return work(new Evaluation(this.limits, start + left))
    } finally {
      this.spentMs += performance.now() - start
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Compilation and cache.

interface Compiled {
  templates: Template[]
  /** Set when the template is exactly one `{{ … }}` output (ignoring surrounding whitespace). */
  single?: Value
  /** Set once the dry run in validateExpression has passed. */
  validated?: boolean
}

const CACHE_SIZE = 1_000
const cache = new Map<string, Compiled>()

function liquidMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function compile(source: string, field: string, budget: ExpressionBudget): Compiled {
  const hit = cache.get(source)
  if (hit) {
    // Re-insert so the Map's insertion order tracks recency (least recently used first).
    cache.delete(source)
    cache.set(source, hit)
    return hit
  }
  const templates = budget.spend(field, () => {
    try {
      return engine.parse(source)
    } catch (err) {
      // Parse errors quote only the expression, which is not sensitive.
      throw ValidationError.field(field, `is not a valid expression: ${liquidMessage(err)}`)
    }
  })
  const parts = templates.filter((t) => !(t.token.kind === TokenKind.HTML && t.token.getText().trim() === ''))
  const compiled: Compiled = { templates }
  if (parts.length === 1 && parts[0] instanceof Output) {
    // A bare Value skips the output escape that Output appends, so the value keeps its type.
    compiled.single = new Value((parts[0].token as unknown as { content: string }).content, engine)
  }
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!)
  cache.set(source, compiled)
  return compiled
}

/** A safe error for a render failure: ours and the limits pass, anything else may quote data. */
function runtimeError(err: unknown, field: string, budget: ExpressionBudget): Error {
  let cause = err
  while (LiquidError.is(cause) && (cause as { originalError?: unknown }).originalError) {
    cause = (cause as { originalError?: unknown }).originalError
  }
  if (cause instanceof LimitError && cause.message === OUT_OF_TIME) return new ExpressionBudgetError(field, budget.limits.requestMs)
  const safe = cause instanceof FilterError || cause instanceof LimitError
  return ValidationError.field(field, safe ? (cause as Error).message : 'the expression could not be evaluated')
}

/** Evaluates one compiled expression; `shared` is a context that single outputs of one evaluation may share. */
function run(compiled: Compiled, scope: Record<string, unknown>, field: string, budget: ExpressionBudget, evaluation: Evaluation, shared?: () => Context): unknown {
  try {
    if (compiled.single) return toValue(toValueSync(compiled.single.value(shared?.() ?? evaluation.context(scope), false))) ?? null
    return engine.renderSync(compiled.templates, evaluation.context(scope))
  } catch (err) {
    throw runtimeError(err, field, budget)
  }
}

const DRY_RUN_SCOPE = { data: null, metadata: {} }

// ---------------------------------------------------------------------------------------------
// Public API.

/**
 * Checks that `source` is a string holding a valid expression: it parses, uses only known
 * filters, and a dry run against null data succeeds (catching bad filter arguments and
 * runaway loops). Filter arguments must therefore be literals. Returns the source.
 * @throws ValidationError naming `field`
 * @throws ExpressionBudgetError when the request's budget runs out
 */
export function validateExpression(source: unknown, field: string, budget = new ExpressionBudget()): string {
  if (typeof source !== 'string') throw ValidationError.field(field, 'must be a string expression')
  const compiled = compile(source, field, budget)
  if (!compiled.validated) {
    budget.spend(field, (evaluation) => run(compiled, DRY_RUN_SCOPE, field, budget, evaluation))
    compiled.validated = true
  }
  return source
}

/**
 * Evaluates `source` with `data` (and `metadata`) in scope. A template that is exactly one
 * `{{ … }}` output returns its value with its JSON type (undefined becomes null; objects are
 * the caller's own, not copies); any other template renders to a string.
 * @throws ValidationError naming `field` on a syntax error, a failing filter or a limit
 * @throws ExpressionBudgetError when the request's budget runs out
 */
export function evaluateExpression(
  source: string,
  context: { data: unknown; metadata?: Record<string, string> },
  field: string,
  budget = new ExpressionBudget()
): unknown {
  const compiled = compile(source, field, budget)
  const scope = { data: context.data, metadata: context.metadata }
  return budget.spend(field, (evaluation) => run(compiled, scope, field, budget, evaluation))
}

const MAX_MASK_DEPTH = 32

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/** Maps every string leaf of `mask` through `leaf`, collecting the field errors of all leaves. */
function mapMask(mask: unknown, path: string, leaf: (source: string, path: string) => unknown): unknown {
  const errors: FieldErrors = {}
  const walk = (node: unknown, at: string, depth: number): unknown => {
    try {
      if (depth > MAX_MASK_DEPTH) throw ValidationError.field(at, 'is nested too deeply')
      if (typeof node === 'string') return leaf(node, at)
      if (Array.isArray(node)) return node.map((item, i) => walk(item, childPath(at, i), depth + 1))
      if (typeof node === 'object' && node !== null) {
        // fromEntries defines own properties, so a "__proto__" key stays a plain key.
        return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, childPath(at, k), depth + 1)]))
      }
      return node
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err
      for (const [p, messages] of Object.entries(err.errors ?? {})) (errors[p] ??= []).push(...messages)
      return undefined
    }
  }
  const result = walk(mask, path, 0)
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return result
}

/**
 * The expressions of a mask with their field paths (`mask.number`, `mask[0]`): its string
 * leaves, or the mask itself when it is a string.
 * @throws ValidationError when the mask is nested too deeply
 */
export function maskExpressions(mask: unknown, field: string): { source: string; path: string }[] {
  const leaves: { source: string; path: string }[] = []
  mapMask(mask, field, (source, path) => leaves.push({ source, path }))
  return leaves
}

/** Compiles every leaf of a mask first, so that parsing never eats into an evaluation's time. */
function compileMask(mask: unknown, field: string, budget: ExpressionBudget): Map<string, Compiled> {
  const compiled = new Map<string, Compiled>()
  mapMask(mask, field, (source, path) => compiled.set(source, compile(source, path, budget)))
  return compiled
}

/**
 * Checks a mask: a string expression, or an object/array whose string leaves are expressions
 * (other leaves are kept as is). Errors name each leaf, e.g. `mask.number`, `mask[0]`. The
 * dry runs of all leaves are one evaluation.
 * @returns the mask unchanged
 * @throws ValidationError
 */
export function validateMask(mask: unknown, field: string, budget = new ExpressionBudget()): unknown {
  const compiled = compileMask(mask, field, budget)
  budget.spend(field, (evaluation) =>
    mapMask(mask, field, (source, path) => {
      const leaf = compiled.get(source)!
      if (!leaf.validated) run(leaf, DRY_RUN_SCOPE, path, budget, evaluation)
    })
  )
  for (const leaf of compiled.values()) leaf.validated = true
  return mask
}

/**
 * Evaluates every string leaf of `mask` against `data`, keeping the mask's shape. All
 * leaves are one evaluation: together they get one evaluation's steps and memory.
 * @throws ValidationError with leaf paths under `field`
 * @throws ExpressionBudgetError when the request's budget runs out
 */
export function evaluateMask(mask: unknown, data: unknown, field = 'mask', budget = new ExpressionBudget()): unknown {
  const compiled = compileMask(mask, field, budget)
  const scope = { data, metadata: undefined }
  return budget.spend(field, (evaluation) => {
    let ctx: Context | undefined
    const shared = () => (ctx ??= evaluation.context(scope))
    return mapMask(mask, field, (source, path) => run(compiled.get(source)!, scope, path, budget, evaluation, shared))
  })
}

/**
 * The string a fingerprint is computed over: the expression's value, JSON-encoded unless it
 * is a string (`null` for null). The caller hashes it.
 * @throws ValidationError naming `field`
 */
export function renderFingerprintSource(
  expression: string,
  data: unknown,
  metadata?: Record<string, string>,
  budget = new ExpressionBudget(),
  field = 'fingerprint_expression'
): string {
  const value = evaluateExpression(expression, { data, metadata }, field, budget)
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/**
 * The parsed templates of `source`, for static analysis (see expression-rules.ts).
 * @throws ValidationError naming `field` when it does not parse
 */
export function parseExpression(source: string, field: string, budget = new ExpressionBudget()): readonly Template[] {
  return compile(source, field, budget).templates
}

/** Whether `filter` is the output escape liquidjs appends to every `{{ … }}` (not written by the caller). */
export function isOutputEscape(filter: LiquidFilter): boolean {
  return (filter as unknown as { handler: unknown }).handler === escapeOutput
}
