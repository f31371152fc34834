/**
 * Hostile request bodies for the expression-cost measurement of bench/run.ts: the most
 * expensive bodies the expression limits still accept, and bodies they (or the limit of
 * tokens per tokenize) refuse. Each carries the status it is expected to get.
 */

export interface HostileRequest {
  label: string
  method: 'POST'
  path: string
  body: string
  /** The statuses the limits answer it with (the worst accepted body may also run out of budget: 413). */
  expected: number[]
}

/** Generic data of 1,000 characters: every filter over it charges 1,000 units of memory. */
const DATA = 'x'.repeat(1000)

/** About 180 steps and 180,000 units of memory: just within one evaluation's limits. */
const heavy = (tag: string) => `{% for i in (1..90) %}{{ data | append: "${tag}" }}{% endfor %}`

/** A token request carrying 64 expressions, each evaluation close to its step and memory limits. */
function worstToken(): Record<string, unknown> {
  return {
    type: 'token',
    data: DATA,
    fingerprint_expression: heavy('f'),
    search_indexes: Array.from({ length: 20 }, (_, i) => heavy(`s${i}`)),
    // The 43 leaves of a mask are one evaluation: 43 × 5 steps and 43 × 4,004 units, just within.
    mask: Array.from({ length: 43 }, (_, i) => `{% for i in (1..2) %}{{ data | append: "m${i}" }}{% endfor %}`)
  }
}

export function hostileRequests(): HostileRequest[] {
  const nestedLoops = '{% for i in (1..99999) %}{% for j in (1..99999) %}{{ j }}{% endfor %}{% endfor %}'
  return [
    { label: 'worst accepted POST /tokens (64 expressions near their limits)', method: 'POST', path: '/tokens', body: JSON.stringify(worstToken()), expected: [201, 413] },
    {
      label: 'POST /tokenize of 150 such tokens (runs out of the request budget)',
      method: 'POST',
      path: '/tokenize',
      body: JSON.stringify(Array.from({ length: 150 }, worstToken)),
      expected: [413]
    },
    {
      label: '4 KB POST /tokens, 50 mask leaves of nested loops',
      method: 'POST',
      path: '/tokens',
      body: JSON.stringify({ type: 'token', data: 'x', mask: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`l${i}`, nestedLoops])) }),
      expected: [400]
    },
    {
      label: 'POST /tokenize of 10,020 expressions (refused before any is evaluated)',
      method: 'POST',
      path: '/tokenize',
      body: JSON.stringify(Array.from({ length: 501 }, (_, i) => ({ type: 'token', data: `v${i}`, search_indexes: Array.from({ length: 20 }, () => heavy('c')) }))),
      expected: [400]
    },
    {
      label: 'POST /tokenize of 100,000 plain values (refused: at most 1,000 tokens a request)',
      method: 'POST',
      path: '/tokenize',
      body: JSON.stringify(Array.from({ length: 100_000 }, (_, i) => i)),
      expected: [400]
    },
    {
      label: 'POST /tokens with the card number reversed in the id',
      method: 'POST',
      path: '/tokens',
      body: JSON.stringify({ id: '{{ data.number | split: "" | reverse | join: "" }}', type: 'card', data: { number: '4242424242424242' } }),
      expected: [400]
    }
  ]
}
