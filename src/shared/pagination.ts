/**
 * Filtered token and audit-log lists count what matches up to this many: counting
 * further would take time in proportion to the vault. A `total_items` of one more
 * means "more than this" (docs/api-decisions.md, "Lists").
 */
export const COUNTED_ITEMS_LIMIT = 10_000

/** A total as people read it: "10,000+" for a count that stopped at the limit. */
export function formatTotal(total: number): string {
  return total === COUNTED_ITEMS_LIMIT + 1 ? `${COUNTED_ITEMS_LIMIT.toLocaleString()}+` : total.toLocaleString()
}
