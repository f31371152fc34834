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
  permissions: readonly Permission[]
  rules: readonly AccessRule[]
  /**
   * The desktop user (tenant OWNER or ADMIN): every permission, tokens masked;
   * plaintext only through an explicit, logged reveal.
   */
  isMember?: boolean
  /** The request's trace id (`BT-TRACE-ID`, sent or generated) when the call came over REST. */
  traceId?: string
}
