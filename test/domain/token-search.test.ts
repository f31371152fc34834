/** The v2 search grammar: what a query's terms are, and what is refused (always naming `query`). */
import { describe, expect, it } from 'vitest'
import { parseTokenSearch } from '../../src/main/domain/token-search'
import { ValidationError } from '../../src/main/domain/errors'

function refusal(query: string): string {
  try {
    parseTokenSearch(query)
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    const { errors } = error as ValidationError
    expect(Object.keys(errors!)).toEqual(['query'])
    return errors!.query[0]
  }
  throw new Error(`accepted: ${query}`)
}

describe('parseTokenSearch', () => {
  it('reads one term of each field', () => {
    expect(parseTokenSearch('type:card')).toEqual([{ field: 'type', value: 'card' }])
    expect(parseTokenSearch('fingerprint:ab12')).toEqual([{ field: 'fingerprint', value: 'ab12' }])
    expect(parseTokenSearch('container:/pci/high/')).toEqual([{ field: 'container', value: '/pci/high/' }])
    expect(parseTokenSearch('data:4242')).toEqual([{ field: 'data', value: '4242' }])
    expect(parseTokenSearch('metadata.customer.id:C-42')).toEqual([{ field: 'metadata', key: 'customer.id', value: 'C-42' }])
  })

  it('reads two terms joined by AND when one is a container term, either way round, with any spacing', () => {
    expect(parseTokenSearch('  data:"Jane Doe"   AND\tcontainer:/general/ ')).toEqual([
      { field: 'data', value: 'Jane Doe' },
      { field: 'container', value: '/general/' }
    ])
    expect(parseTokenSearch('container:/a/ AND container:/b/')).toEqual([
      { field: 'container', value: '/a/' },
      { field: 'container', value: '/b/' }
    ])
  })

  it('unquotes values: \\" and \\\\ inside quotes, special characters as text, colons in values', () => {
    expect(parseTokenSearch('data:"say \\"hi\\" \\\\ (now) * ? [x] ~ ^"')).toEqual([{ field: 'data', value: 'say "hi" \\ (now) * ? [x] ~ ^' }])
    expect(parseTokenSearch('data:a:b')).toEqual([{ field: 'data', value: 'a:b' }])
  })

  it('refuses, saying why, without repeating the query', () => {
    expect(refusal('')).toBe('is required')
    expect(refusal('type:card OR type:bank')).toMatch(/OR and NOT/)
    expect(refusal('NOT type:card')).toMatch(/OR and NOT/)
    expect(refusal('-type:card')).toMatch(/NOT, \+ and -/)
    expect(refusal('(type:card)')).toMatch(/parentheses/)
    expect(refusal('data:[1 TO 2]')).toMatch(/ranges/)
    expect(refusal('data:42*')).toMatch(/wildcards/)
    expect(refusal('data:4~2')).toMatch(/fuzzy/)
    expect(refusal('data:"42')).toMatch(/unbalanced quote/)
    expect(refusal('data:4"2')).toMatch(/unbalanced quote/)
    expect(refusal('data:"4"2')).toMatch(/followed by a space/)
    expect(refusal('data:"\\n"')).toMatch(/backslash/)
    expect(refusal('number:4242')).toMatch(/only type, fingerprint/)
    expect(refusal('metadata.:x')).toMatch(/metadata key/)
    expect(refusal('4242')).toMatch(/field:value/)
    expect(refusal('data:')).toMatch(/needs a value/)
    expect(refusal('data:""')).toMatch(/needs a value/)
    expect(refusal('type:card AND data:1')).toMatch(/one of them|one is a container/)
    expect(refusal('type:card AND')).toMatch(/AND must join two terms/)
    expect(refusal('container:/a/ AND container:/b/ AND type:card')).toMatch(/one is a container/)
    expect(refusal('container:pci')).toMatch(/container is a path/)
    for (const query of ['data:4242424242424242 OR x', 'x4242424242424242', 'data:"4242424242424242']) expect(refusal(query)).not.toContain('4242424242424242')
  })
})
