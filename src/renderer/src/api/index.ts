/**
 * The renderer's only door to the main process (DESIGN §1): wraps
 * `window.tessera` once, unwrapping each `IpcResult` and rethrowing a failure
 * as a `ProblemError`. Stores call `api()`; tests swap in a fake with `setApi`.
 */
import type { IpcResult, Namespace, TesseraApi, TesseraBridge } from '@shared/ipc'
import type { Problem } from '@shared/types'

/** A failed call, carrying the service's problem document (status, detail, field errors). */
export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail)
    this.name = 'ProblemError'
  }

  get status(): number {
    return this.problem.status
  }
}

type AnyMethod = (...args: unknown[]) => Promise<IpcResult<unknown>>

/** Builds the contract from a bridge, one unwrapping function per bridged method. */
export function createApi(bridge: TesseraBridge): TesseraApi {
  const api: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> = {}
  for (const namespace of Object.keys(bridge) as Namespace[]) {
    const methods = bridge[namespace] as unknown as Record<string, AnyMethod>
    api[namespace] = {}
    for (const name of Object.keys(methods)) {
      api[namespace][name] = async (...args: unknown[]) => {
        const result = await methods[name](...args)
        if (!result.ok) throw new ProblemError(result.problem)
        return result.value
      }
    }
  }
  return api as unknown as TesseraApi
}

let current: TesseraApi | undefined

/** The contract, built from `window.tessera` on first use. */
export function api(): TesseraApi {
  return (current ??= createApi(window.tessera))
}

/** Replaces the contract (tests); `undefined` goes back to `window.tessera`. */
export function setApi(next: TesseraApi | undefined): void {
  current = next
}

/** The message to show for any error: the problem's detail, or a generic sentence for bugs. */
export function describeError(error: unknown): { title: string; detail: string; fields: string[] } {
  if (error instanceof ProblemError) {
    const fields = Object.entries(error.problem.errors ?? {}).map(([path, messages]) => `${path}: ${messages.join('; ')}`)
    return { title: error.problem.title, detail: error.problem.detail, fields }
  }
  return { title: 'Error', detail: 'Something went wrong. Try again.', fields: [] }
}
