/**
 * The query of `POST /v2/tokens/search` (Basis Theory's v2 grammar): one `field:value` term, or two
 * joined by `AND` where one is a `container` term. Fields: `type`, `fingerprint`, `container` (the
 * container and those below it), `metadata.<key>` (exact, case-sensitive) and `data` (a token's
 * search index values, exactly). A value may be quoted with double quotes (`\"` and `\\` inside).
 * Errors name `query` and never repeat what it holds: a value may be sensitive data.
 */
import { containerPath, tokenMetadata } from '../../shared/contracts'
import { ValidationError } from './errors'

export type SearchTerm = { field: 'type' | 'fingerprint' | 'container' | 'data'; value: string } | { field: 'metadata'; key: string; value: string }

const FIELDS = 'type, fingerprint, container, data and metadata.<key>'
const SHAPE = 'must be one field:value term, or two joined by AND where one is a container term'

const invalid = (message: string) => ValidationError.field('query', message)

/** Characters that mean something in Basis Theory's full (v1, Lucene) grammar, which v2 does not take. */
const UNSUPPORTED: [RegExp, string][] = [
  [/[*?]/, 'wildcards (* and ?) are not supported; quote a value that holds them'],
  [/[()]/, 'parentheses are not supported'],
  [/[[\]{}]/, 'ranges are not supported'],
  [/[~^]/, 'fuzzy and boosted terms (~ and ^) are not supported; quote a value that holds them'],
  [/"/, 'has an unbalanced quote']
]

/** Words that join terms in the full grammar. */
const OPERATORS = new Set(['OR', 'NOT', '||', '&&', '!'])

interface Cursor {
  text: string
  at: number
}

const skipSpaces = (cursor: Cursor) => {
  while (cursor.at < cursor.text.length && /\s/.test(cursor.text[cursor.at])) cursor.at++
}

/** The text up to the next whitespace. */
function readWord(cursor: Cursor): string {
  const start = cursor.at
  while (cursor.at < cursor.text.length && !/\s/.test(cursor.text[cursor.at])) cursor.at++
  return cursor.text.slice(start, cursor.at)
}

/** A quoted value, the cursor on its opening quote; `\"` and `\\` stand for `"` and `\`. */
function readQuoted(cursor: Cursor): string {
  let value = ''
  for (cursor.at++; cursor.at < cursor.text.length; cursor.at++) {
    const character = cursor.text[cursor.at]
    if (character === '"') {
      cursor.at++
      if (cursor.at < cursor.text.length && !/\s/.test(cursor.text[cursor.at])) throw invalid('a quoted value must be followed by a space or the end')
      return value
    }
    if (character === '\\') {
      const escaped = cursor.text[++cursor.at]
      if (escaped !== '"' && escaped !== '\\') throw invalid('inside quotes, a backslash may only escape " or \\')
      value += escaped
    } else value += character
  }
  throw invalid('has an unbalanced quote')
}

function checkUnquoted(text: string): void {
  for (const [pattern, message] of UNSUPPORTED) if (pattern.test(text)) throw invalid(message)
}

/** The field of a term, checked: `metadata.<key>` with a key metadata may hold. */
function fieldOf(name: string): Pick<SearchTerm, 'field'> & { key?: string } {
  if (name === 'type' || name === 'fingerprint' || name === 'container' || name === 'data') return { field: name }
  if (name.startsWith('metadata.')) {
    const key = name.slice('metadata.'.length)
    if (!tokenMetadata.safeParse({ [key]: '' }).success) throw invalid('a metadata key is 1–100 characters without quotes, backslashes or control characters')
    return { field: 'metadata', key }
  }
  if (name.startsWith('-') || name.startsWith('+')) throw invalid('NOT, + and - are not supported')
  throw invalid(`only ${FIELDS} can be searched`)
}

function readTerm(cursor: Cursor): SearchTerm {
  const start = cursor.at
  while (cursor.at < cursor.text.length && !/[\s:"]/.test(cursor.text[cursor.at])) cursor.at++
  const name = cursor.text.slice(start, cursor.at)
  if (cursor.text[cursor.at] !== ':') {
    const word = name + readWord(cursor)
    if (OPERATORS.has(word)) throw invalid('OR and NOT are not supported: only AND, joining a container term with one other')
    checkUnquoted(word)
    throw invalid(`terms are field:value, the field one of ${FIELDS}`)
  }
  checkUnquoted(name)
  const field = fieldOf(name)
  cursor.at++
  const quoted = cursor.text[cursor.at] === '"'
  const value = quoted ? readQuoted(cursor) : readWord(cursor)
  if (!quoted) checkUnquoted(value)
  if (value === '') throw invalid('a term needs a value after its colon')
  if (field.field === 'metadata') return { field: 'metadata', key: field.key!, value }
  if (field.field === 'container' && !containerPath.safeParse(value).success) throw invalid('a container is a path like /pci/high/ (letters, digits, _ and -, each segment ending in /)')
  return { field: field.field, value } as SearchTerm
}

/** The terms of a v2 search query (one or two); a 400 naming `query` for anything else. */
export function parseTokenSearch(query: string): SearchTerm[] {
  const cursor = { text: query, at: 0 }
  const terms: SearchTerm[] = []
  skipSpaces(cursor)
  if (cursor.at === cursor.text.length) throw invalid('is required')
  for (;;) {
    terms.push(readTerm(cursor))
    skipSpaces(cursor)
    if (cursor.at === cursor.text.length) break
    const joint = readWord(cursor)
    if (joint !== 'AND') throw invalid(OPERATORS.has(joint) ? 'OR and NOT are not supported: only AND, joining a container term with one other' : SHAPE)
    skipSpaces(cursor)
    if (cursor.at === cursor.text.length) throw invalid('AND must join two terms')
  }
  if (terms.length > 2 || (terms.length === 2 && !terms.some((term) => term.field === 'container'))) throw invalid(SHAPE)
  return terms
}
