import { describe, expect, it } from 'vitest'
import { mergePatch } from '../../src/main/domain/merge-patch'

describe('mergePatch (RFC 7386)', () => {
  // RFC 7386 Appendix A, every example.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
  ])('patches %j with %j into %j', (target, patch, result) => {
    expect(mergePatch(target, patch)).toEqual(result)
  })

  it('treats keys named like Object.prototype members as plain data', () => {
    const target = JSON.parse('{"hasOwnProperty": 1, "constructor": 2, "__proto__": {"x": 1}}')
    const patched = mergePatch(target, JSON.parse('{"hasOwnProperty": null, "constructor": {"a": 1}, "__proto__": {"y": 2}, "prototype": 3}')) as object
    expect(Object.getPrototypeOf(patched)).toBe(Object.prototype)
    expect(JSON.stringify(patched)).toBe('{"constructor":{"a":1},"__proto__":{"x":1,"y":2},"prototype":3}')
  })

  it('leaves the target untouched', () => {
    const target = { a: { b: 1 } }
    mergePatch(target, { a: { b: 2, c: 3 } })
    expect(target).toEqual({ a: { b: 1 } })
  })
})
