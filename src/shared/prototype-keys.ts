/**
 * Prototype-poisoning keys in structured data. REST refuses a body holding a
 * `__proto__` key anywhere while parsing it (bourne, body-text.ts); the IPC
 * door receives objects Electron's structured clone built, which keep an own
 * `__proto__` key, and refuses them with this check before any handler runs.
 */

/** Where the first own `__proto__` key sits in `value` (`[0].c.__proto__`, after `prefix`), or undefined when it holds none. */
export function prototypeKeyPath(value: unknown, prefix = ''): string | undefined {
  // Iterative, so a deeply nested payload cannot overflow the stack; `seen` stops at cycles (structured clone keeps them).
  const seen = new Set<object>()
  const pending: { value: unknown; path: string }[] = [{ value, path: prefix }]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: current, path } = next
    if (typeof current !== 'object' || current === null || seen.has(current)) continue
    seen.add(current)
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) pending.push({ value: current[index], path: `${path}[${index}]` })
      continue
    }
    // Only plain data (what JSON and structured clone make) is walked: a Uint8Array's bytes or a Date hold no keys.
    const prototype = Object.getPrototypeOf(current) as unknown
    if (prototype !== Object.prototype && prototype !== null) continue
    if (Object.hasOwn(current, '__proto__')) return join(path, '__proto__')
    const entries = Object.entries(current)
    for (let index = entries.length - 1; index >= 0; index--) pending.push({ value: entries[index][1], path: join(path, entries[index][0]) })
  }
  return undefined
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key)
