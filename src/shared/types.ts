/**
 * Wire types of the REST interface (spec/interface.md). Shared by the service,
 * the IPC contract and the renderer; no runtime code here.
 */
import type { ApplicationType, Permission, Transform } from './permissions'

export type { ApplicationType, Permission, Transform }

export interface Pagination {
  total_items: number
  page_number: number
  page_size: number
  total_pages: number
}

export interface Page<T> {
  pagination: Pagination
  data: T[]
}

export interface Token {
  id: string
  tenant_id: string
  type: string
  data?: unknown
  mask?: unknown
  fingerprint: string
  containers: string[]
  metadata?: Record<string, string>
  created_by?: string
  created_at?: string
  modified_by?: string
  modified_at?: string
  search_indexes?: string[]
  fingerprint_expression?: string
  expires_at?: string
}

export interface CreateTokenRequest {
  id?: string
  type: string
  data: unknown
  mask?: unknown
  containers?: string[]
  metadata?: Record<string, string>
  search_indexes?: string[]
  fingerprint_expression?: string
  deduplicate_token?: boolean
  expires_at?: string
}

export interface Condition {
  attribute: 'id' | 'container'
  operator: 'starts_with' | 'equals'
  value: string
}

export interface AccessRule {
  description?: string
  priority: number
  container?: string
  conditions?: Condition[]
  transform: Transform
  permissions: Permission[]
}

export interface Application {
  id: string
  tenant_id: string
  name: string
  key?: string
  type: ApplicationType
  permissions: Permission[]
  rules: AccessRule[]
  created_by?: string
  created_at?: string
  modified_by?: string
  modified_at?: string
  expires_at?: string
}

export interface LogEntry {
  tenant_id: string
  actor_id?: string
  actor_type?: string
  entity_type: string
  entity_id: string
  operation: string
  message: string
  created_at: string
  /** How many events an aggregated entry stands for (refused requests); absent for one. */
  count?: number
}

export interface EntityType {
  display_name: string
  value: string
}

export interface SessionCreated {
  session_key: string
  nonce: string
  expires_at: string
}

/** A session as `GET /sessions` lists it: never its key or nonce. */
export interface Session {
  id: string
  tenant_id: string
  /** The public application that created it. */
  application_id: string
  /** `PENDING` until a private application authorizes its nonce. */
  status: 'PENDING' | 'AUTHORIZED'
  /** The private application that authorized it. */
  authorized_by?: string
  authorized_at?: string
  permissions: Permission[]
  rules: AccessRule[]
  expires_at: string
  created_at: string
}

export interface User {
  id: string
  email?: string
  first_name?: string
  last_name?: string
  picture?: string
}

export interface TenantMember {
  id: string
  tenant_id: string
  role: 'OWNER' | 'ADMIN'
  user: User
  created_by?: string
  created_at?: string
  modified_by?: string
  modified_at?: string
}

export interface TenantInvitation {
  id: string
  tenant_id: string
  email: string
  status: 'PENDING' | 'EXPIRED'
  expires_at: string
  created_by?: string
  created_at?: string
  modified_by?: string
  modified_at?: string
}

/** RFC 7807 problem document returned by every error response. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code?: string
  errors?: Record<string, string[]>
}
