/**
 * The permission catalogue and which application types may hold
 * which permissions. Shared by the service (validation) and the GUI (pickers).
 */

export const TOKEN_PERMISSIONS = [
  'token:create',
  'token:read',
  'token:update',
  'token:delete',
  'token:search',
  'token:use'
] as const

export const MANAGEMENT_PERMISSIONS = [
  'log:read',
  'application:create',
  'application:read',
  'application:update',
  'application:delete',
  'tenant:read',
  'tenant:update',
  'tenant:member:read',
  'tenant:member:update',
  'tenant:member:delete',
  'tenant:invitation:create',
  'tenant:invitation:read',
  'tenant:invitation:update',
  'tenant:invitation:delete',
  'webhook:create',
  'webhook:read',
  'webhook:update',
  'webhook:delete'
] as const

export type TokenPermission = (typeof TOKEN_PERMISSIONS)[number]
export type ManagementPermission = (typeof MANAGEMENT_PERMISSIONS)[number]
export type Permission = TokenPermission | ManagementPermission

export const APPLICATION_TYPES = ['private', 'public', 'management'] as const
export type ApplicationType = (typeof APPLICATION_TYPES)[number]

/** What each application type may be granted, in permissions and in rules alike. */
export const PERMISSIONS_BY_APPLICATION_TYPE: Record<ApplicationType, readonly Permission[]> = {
  // Public keys ship inside browsers and phones: they can only put data in.
  public: ['token:create', 'token:update'],
  private: TOKEN_PERMISSIONS,
  management: MANAGEMENT_PERMISSIONS
}

export const TRANSFORMS = ['redact', 'mask', 'reveal'] as const
export type Transform = (typeof TRANSFORMS)[number]

export function isPermission(value: unknown): value is Permission {
  return (
    typeof value === 'string' &&
    ((TOKEN_PERMISSIONS as readonly string[]).includes(value) || (MANAGEMENT_PERMISSIONS as readonly string[]).includes(value))
  )
}
