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

export type Condition = z.infer<typeof contract.condition>

export type AccessRule = z.infer<typeof contract.accessRuleView>

/** An application; `key` only in the create and regenerate responses. */
export type Application = z.infer<typeof contract.application> & { key?: string }

/** One of an application's keys; `key` only in the response that created it. */
export type ApplicationKey = z.infer<typeof contract.applicationKey>

export type LogEntry = z.infer<typeof contract.logEntry>

export type EntityType = z.infer<typeof contract.entityType>

export type SessionCreated = z.infer<typeof contract.sessionCreated>

/** A session as `GET /sessions` lists it: never its key or nonce. */
export type Session = z.infer<typeof contract.session>

export type User = z.infer<typeof contract.user>

export type TenantMember = z.infer<typeof contract.member>

export type Tenant = z.infer<typeof contract.tenant>

export type TenantInvitation = z.infer<typeof contract.invitation>

/** A webhook: where the vault POSTs signed events, and which. */
export type Webhook = z.infer<typeof contract.webhook>

/** One event on its way to a webhook, with every attempt so far (the delivery log). */
export type WebhookDelivery = z.infer<typeof contract.webhookDelivery>

/** RFC 7807 problem document returned by every error response. */
export type Problem = z.infer<typeof contract.problem>

// Key rotation (`tessera keys`, desktop Settings): wire shapes of status and reports.

/** The kinds of objects sealed with a tenant's data key. */
export type SealedObjectKind = 'tokens' | 'outbox_mails' | 'sealed_settings' | 'token_intents' | 'idempotent_responses'

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
