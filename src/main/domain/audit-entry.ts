/**
 * An audit log entry's fields: what the service writes (storage's LogRow) and
 * what each entry's MAC covers (crypto/audit.ts), one definition for both.
 */
export interface AuditEntry {
  tenant_id: string
  actor_id: string | null
  actor_type: string | null
  entity_type: string
  entity_id: string
  operation: string
  message: string
  created_at: number
  /** How many events an aggregated entry stands for (refused requests); null for one. */
  count: number | null
  /**
   * The REST request's trace id (`BT-TRACE-ID`); null or absent for entries no REST
   * request made. Entries without one (all entries written before trace ids were
   * recorded) are encoded for their MAC exactly as before, so their MACs still verify;
   * one that has it appends it, length-prefixed.
   */
  trace_id?: string | null
}
