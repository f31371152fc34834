/** Key/value rows as forms edit them (metadata, filters). */
export interface Pair {
  key: string
  value: string
}

export function recordToPairs(record: Record<string, string> | undefined): Pair[] {
  return Object.entries(record ?? {}).map(([key, value]) => ({ key, value }))
}

/** Rows with an empty key are ignored; a repeated key keeps its last value. */
export function pairsToRecord(pairs: Pair[]): Record<string, string> {
  return Object.fromEntries(pairs.filter((pair) => pair.key.trim()).map((pair) => [pair.key.trim(), pair.value]))
}
