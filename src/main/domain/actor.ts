/**
 * Who is calling: passed to every service method so every door (REST, IPC,
 * CLI) is authorised and audited the same way.
 */
import type { AccessRule, ApplicationType, Permission } from '../../shared/types'

export type ActorType = 'application' | 'session' | 'user'

export interface Actor {
  type: ActorType
  /** Application id, session id or user id. */
  id: string
  tenantId: string
  /** Set for applications (and for sessions: the type of the application that created them). */
  applicationType?: ApplicationType
  /**
   * The id of the application key the request authenticated with (application_keys.id):
   * a write that must not outlive that key checks it still exists in its transaction.
   * Absent for sessions, members, and an application a person acts through (the desktop).
   */
  keyId?: string
  permissions: readonly Permission[]
  rules: readonly AccessRule[]
  /**
   * The desktop user (tenant OWNER or ADMIN): every permission, tokens masked;
   * plaintext only through an explicit, logged reveal.
   */
  isMember?: boolean
  /** The request's trace id (`BT-TRACE-ID`, sent or generated) when the call came over REST. */
  traceId?: string
  /**
   * The `BT-IDEMPOTENCY-KEY` the request holds while it runs (server/middleware/idempotency.ts).
   * The transaction of its change records it (app/audit.ts): a retry after the service stopped
   * between that commit and storing the response then never runs the request again.
   */
  idempotencyKey?: HeldIdempotencyKey
}

/** A `BT-IDEMPOTENCY-KEY` held by a running request (app/idempotency.service.ts). */
export interface HeldIdempotencyKey {
  /** The reservation holding the key (idempotency_keys.reservation). */
  reservation: string
  /** The keyed hash of the request (method, path and body). */
  requestHash: string
  /** When the key expires, epoch ms. */
  expiresAt: number
}
