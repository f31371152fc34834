import { describe, expect, it, vi } from 'vitest'
import type { TesseraBridge } from '@shared/ipc'
import { createApi, describeError, ProblemError } from '@renderer/api'

function bridge(result: unknown): TesseraBridge {
  return { tokens: { get: vi.fn(async () => result) } } as unknown as TesseraBridge
}

describe('createApi', () => {
  it('unwraps a successful result', async () => {
    const api = createApi(bridge({ ok: true, value: { id: 'tok_1' } }))
    await expect(api.tokens.get('tok_1')).resolves.toEqual({ id: 'tok_1' })
  })

  it('rethrows a failure as a ProblemError carrying status, detail and field errors', async () => {
    const problem = { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'The request has invalid fields.', errors: { 'data.number': ['fails the Luhn check'] } }
    const api = createApi(bridge({ ok: false, problem }))
    const error = await api.tokens.get('x').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProblemError)
    expect((error as ProblemError).status).toBe(400)
    expect(describeError(error)).toEqual({ title: 'Bad Request', detail: 'The request has invalid fields.', fields: ['data.number: fails the Luhn check'] })
  })
})

describe('describeError', () => {
  it('says nothing about internals for anything that is not a problem', () => {
    expect(describeError(new Error('SQLITE_CONSTRAINT: tokens.id = 4242…'))).toEqual({ title: 'Error', detail: 'Something went wrong. Try again.', fields: [] })
  })
})
