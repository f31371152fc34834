/**
 * Wire types of the REST interface, inferred from the schemas of
 * ./contracts. Shared by the service, the IPC contract and the renderer; no
 * runtime code here.
 */
import type { z } from 'zod'
import type * as contract from './contracts'
import type { ApplicationType, Permission, Transform } from './permissions'

export type { ApplicationType, Permission, Transform }

export type Pagination = z.infer<typeof contract.pagination>

export interface Page<T> {
  pagination: Pagination
  data: T[]
}

export type Token = z.infer<typeof contract.token>

export type CreateTokenRequest = z.input<typeof contract.createTokenBody>

export type Condition = z.infer<typeof contract.condition>

export type AccessRule = z.infer<typeof contract.accessRuleView>

/** An application; `key` only in the create and regenerate responses. */
export type Application = z.infer<typeof contract.application> & { key?: string }

export type LogEntry = z.infer<typeof contract.logEntry>

export type EntityType = z.infer<typeof contract.entityType>

export type SessionCreated = z.infer<typeof contract.sessionCreated>

/** A session as `GET /sessions` lists it: never its key or nonce. */
export type Session = z.infer<typeof contract.session>

export type User = z.infer<typeof contract.user>

export type TenantMember = z.infer<typeof contract.member>

export type TenantInvitation = z.infer<typeof contract.invitation>

/** RFC 7807 problem document returned by every error response. */
export type Problem = z.infer<typeof contract.problem>
