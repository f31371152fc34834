import { vi } from 'vitest'
import type { TesseraApi } from '@shared/ipc'
import type { Page, Problem } from '@shared/types'
import { ProblemError } from '@renderer/api'

type DeepPartial<T> = { [K in keyof T]?: Partial<T[K]> }

/** A TesseraApi whose methods are the given fakes; anything else fails the test when called. */
export function fakeApi(parts: DeepPartial<TesseraApi>): TesseraApi {
  return new Proxy({} as TesseraApi, {
    get: (_target, namespace: string) =>
      new Proxy(
        {},
        {
          get: (_inner, method: string) =>
            (parts as Record<string, Record<string, unknown>>)[namespace]?.[method] ??
            vi.fn(async () => {
              throw new Error(`unexpected call ${namespace}.${method}`)
            })
        }
      )
  })
}

export function problem(status: number, detail: string, errors?: Record<string, string[]>): ProblemError {
  const body: Problem = { type: 'about:blank', title: 'Bad Request', status, detail, ...(errors ? { errors } : {}) }
  return new ProblemError(body)
}

/** One page of a list as the service sends it. */
export function pageOf<T>(data: T[], total = data.length, page = 1, size = 20): Page<T> {
  return { pagination: { total_items: total, page_number: page, page_size: size, total_pages: Math.ceil(total / size) }, data }
}
