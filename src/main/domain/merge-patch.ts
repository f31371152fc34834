/** JSON merge patch (RFC 7386): how PATCH /tokens/{id} changes `data`, `mask` and `metadata`. */

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * RFC 7386 merge patch, returning a new value. Written out rather than taken from
 * json-merge-patch, which throws on a target holding a `hasOwnProperty` key and
 * silently drops `constructor` and `prototype` keys; here every key is plain data.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch
  const merged = new Map(isJsonObject(target) ? Object.entries(target) : [])
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key)
    else merged.set(key, mergePatch(merged.get(key), value))
  }
  return Object.fromEntries(merged)
}
