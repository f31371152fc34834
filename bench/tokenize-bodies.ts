/**
 * The `POST /tokenize` bodies of the bulk figures, shared by `npm run bench`
 * (throughput, bench/run.ts) and `npm run bench:cpu -- --bulk` (CPU per token,
 * bench/cpu.ts), so both measure the same requests.
 */
import type autocannon from 'autocannon'
import { benchCard } from './raw-insert'

/** Elements per request of (b): plain values. */
export const TOKENIZE_VALUES = 1000
/** Elements per request of (d): card token requests. */
export const TOKENIZE_CARDS = 100

/** The `n`th plain value of (b): about as long as the ceiling's (`value-<n>-` and 20 bytes). */
export const plainValue = (n: number) => `value-${n}-${'x'.repeat(20)}`

/** Card requests with distinct numbers, as a merchant's would be (the ceiling seals the same series). */
export const cardRequest = (n: number) => ({ type: 'card', data: benchCard(n) })

/**
 * A POST /tokenize request whose body is `count` new elements each time, as
 * real bulk data is: repeated values would hit the same index pages again,
 * which the raw ceiling (all distinct) does not get to do.
 */
export function distinctBodies(count: number, element: (n: number) => unknown, start = 0): autocannon.Request {
  let next = start
  return {
    method: 'POST',
    setupRequest: (request) => {
      const first = next
      next += count
      return { ...request, body: JSON.stringify(Array.from({ length: count }, (_, i) => element(first + i))) }
    }
  }
}
