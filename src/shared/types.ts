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

// Key rotation (`tessera keys`, desktop Settings): wire shapes of status and reports.

/** The kinds of objects sealed with a tenant's data key. */
export type SealedObjectKind = 'tokens' | 'outbox_mails' | 'sealed_settings'

/** How many objects of each kind a data-key version seals. */
export type SealedObjectCounts = Record<SealedObjectKind, number>

/** Per kind, `version → objects sealed under it` (versions as strings: JSON keys). */
export type SealedCountsByVersion = Record<SealedObjectKind, Record<string, number>>

export interface DataKeyVersion {
  version: number
  /** The version new writes use. */
  current: boolean
  /** A short public name of the key (BLAKE2b keyed by the key itself); it reveals nothing of the key. */
  key_check_value: string
  created_at: string
  /** Set once retired: the key is deleted and nothing it sealed can be opened again. */
  retired_at?: string
  objects: SealedObjectCounts
}

/** A rotation's re-encryption pass. */
export interface KeyRotationProgress {
  target_version: number
  started_at: string
  /** Set once every sealed object is on `target_version`. */
  finished_at?: string
  /** Objects that were on other versions when the rotation started. */
  total: number
  /** Objects still on other versions. */
  remaining: number
}

export interface TenantKeyStatus {
  tenant_id: string
  current_version: number
  /** Every version, retired ones included, oldest first. */
  versions: DataKeyVersion[]
  /** The latest rotation, in progress or finished. */
  rotation?: KeyRotationProgress
}

export interface KeyStatus {
  tenants: TenantKeyStatus[]
}

/**
 * Proof that a data-key version was retired only once nothing used it: the
 * objects per kind and version when the rotation off it started, and in the
 * transaction that deleted the key (the retired version at 0 everywhere).
 */
export interface KeyRetirementReport {
  report: 'tessera-data-key-retirement'
  tenant_id: string
  retired_version: number
  retired_key_check_value: string
  retired_key_created_at: string
  /** The version that seals everything now. */
  current_version: number
  current_key_check_value: string
  /** The rotation that moved the objects off the retired version, when there was one. */
  rotation?: { target_version: number; started_at: string; finished_at?: string }
  counts_before?: SealedCountsByVersion
  counts_after: SealedCountsByVersion
  retired_at: string
  /** Who retired it, as the audit log names them. */
  retired_by: string
}

/** The result of a master-key rotation. */
export interface MasterKeyRotated {
  rotated_at: string
  /** A short public name of the new master key, to match it against its backup. */
  key_check_value: string
}
