/**
 * Webhook events as they are sent: `{"event": {id, type, timestamp, tenant_id,
 * trace_id, data}, "delivered_at"}`, serialised canonically (keys sorted at
 * every level, no white space) so the bytes signed are the bytes sent and a
 * receiver can recompute them from the parsed body.
 */

/** Who caused an event; null for the system (expiry sweeps). */
export interface EventActor {
  id: string
  type: string
}

export interface WebhookEvent {
  id: string
  type: string
  /** ISO 8601. */
  timestamp: string
  tenant_id: string
  trace_id: string | null
  /** The entity (never token data nor keys) and who acted. */
  data: Record<string, unknown> & { actor: EventActor | null }
}

/** JSON with the keys of every object sorted by code unit and no white space; undefined members are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
  return `{${entries.join(',')}}`
}

/** The body POSTed for `event`, delivered at `deliveredAt` (ISO 8601). */
export function deliveryBody(event: WebhookEvent, deliveredAt: string): string {
  return canonicalJson({ event, delivered_at: deliveredAt })
}
