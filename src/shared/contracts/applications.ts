/** Applications: API keys with their permissions and access rules. */
import { z } from 'zod'
import { APPLICATION_TYPES, type ApplicationType } from '../permissions'
import { accessRuleView, grantFields, permission } from './access'
import { checkWith, pageOf, pageQuery, queryList, timestamp, uuidFilter } from './common'
import { nameText } from './fields'

export const applicationName = nameText(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'))
export const applicationType = z.enum(APPLICATION_TYPES, { error: `must be one of ${APPLICATION_TYPES.join(', ')}` })

const grantsNote = 'At least one of `permissions` and `rules` must be non-empty. Public applications may hold only `token:create` and `token:update`, and their rules may not `reveal` (a public key ships to browsers and phones); private ones only `token:*`, management ones only the others.'

/**
 * `POST /applications`. Which permissions are valid depends on `type`, so
 * they are checked against the declared type when it is valid, and against
 * the whole catalogue otherwise (the `type` error is then reported alongside
 * any other field's).
 */
export function createApplicationBody(type?: ApplicationType) {
  return z.strictObject({
    name: applicationName,
    type: applicationType,
    ...grantFields(type),
    expires_at: z.string().optional().meta({ description: 'When the application is deleted: ISO 8601 or `M/D/YYYY[ h:mm:ss AM|PM ±hh:mm]`' }),
    create_key: z.boolean({ error: 'must be true or false' }).optional().meta({ description: 'Whether the application gets a key at once (default `true`); without one, add keys with `POST /applications/{id}/keys`' })
  })
}

/**
 * `POST /applications` as the service takes it: the permissions checked against
 * the declared type when it is valid (see `createApplicationBody`).
 */
export const createApplicationCommand = z.unknown().transform((body, ctx) => {
  const declared = applicationType.safeParse((body as { type?: unknown } | null)?.type)
  return checkWith(createApplicationBody(declared.success ? declared.data : undefined), body, ctx)
})

/**
 * `PUT /applications/{id}`: replaces name, permissions and rules; the type is fixed.
 * `type` `'unchecked'` takes any permission name: what the door checks before the
 * service, which knows the application's type, checks the names against it.
 */
export function updateApplicationBody(type?: ApplicationType | 'unchecked') {
  const grants = grantFields(type)
  return z.strictObject({
    name: applicationName,
    // Spec: "A non-empty array when used".
    permissions: grants.permissions.unwrap().min(1, 'must not be empty when given').optional(),
    rules: grants.rules,
    type: z.never({ error: 'cannot be changed; create a new application instead' }).optional()
  })
}

/** The create and update bodies as documented (grants of any application type). */
export const createApplicationRequest = createApplicationBody().meta({ id: 'CreateApplicationRequest', description: grantsNote })
export const updateApplicationRequest = updateApplicationBody().meta({ id: 'UpdateApplicationRequest', description: grantsNote })

export type CreateApplicationInput = z.infer<typeof createApplicationRequest>
export type UpdateApplicationInput = z.infer<typeof updateApplicationRequest>

/** `PUT /applications/{id}` as the doors check it; the service checks the permission names against the application's type. */
export const updateApplicationCommand = updateApplicationBody('unchecked')

/** `GET /applications`. */
export const listApplicationsQuery = z.strictObject({
  id: queryList(uuidFilter).meta({ description: 'Only these applications (repeatable)' }),
  type: queryList(applicationType).meta({ description: 'Only these types (repeatable)' }),
  ...pageQuery(100)
})

export type ListApplicationsQuery = z.infer<typeof listApplicationsQuery>

/** `GET /permissions`. */
export const permissionsQuery = z.strictObject({
  application_type: applicationType.optional().meta({ description: 'Only what an application of this type may hold' })
})

export type PermissionsQuery = z.infer<typeof permissionsQuery>

export const permissionList = z.array(permission).meta({ id: 'PermissionList' })

/** One of an application's keys; its value only in the response that created it. */
export const applicationKey = z
  .strictObject({
    id: z.uuid(),
    key: z.string().optional().meta({ description: 'The API key (`SVC-API-KEY` or `BT-API-KEY`), only in the response that created it' }),
    created_by: z.uuid().optional(),
    created_at: timestamp
  })
  .meta({ id: 'ApplicationKey' })

/** `GET /applications/{id}/keys`: takes no parameters (a given one is a 400 naming it, rather than silently ignored). */
export const listApplicationKeysQuery = z.strictObject({})

export const applicationKeyList = z.array(applicationKey).meta({ id: 'ApplicationKeyList' })

const applicationFields = {
  id: z.uuid(),
  tenant_id: z.uuid(),
  name: z.string(),
  type: z.enum(APPLICATION_TYPES).meta({ description: '`private` (backend services), `public` (browsers and phones: sessions, create and update only) or `management`' }),
  permissions: z.array(permission),
  rules: z.array(accessRuleView),
  created_by: z.uuid().optional(),
  created_at: timestamp.optional(),
  modified_by: z.uuid().optional(),
  modified_at: timestamp.optional(),
  expires_at: timestamp.optional().meta({ description: 'When the application is deleted' }),
  keys: z.array(applicationKey).meta({ description: 'Every key of the application, oldest first; a key’s value only in the response that created it' })
}

/** An application; its key is never shown again after create and regenerate. */
export const application = z.strictObject(applicationFields).meta({ id: 'Application' })

/** The create and regenerate responses: the application with its new key (if any), shown this once. */
export const applicationWithKey = z
  .strictObject({ ...applicationFields, key: z.string().optional().meta({ description: 'The new API key (`SVC-API-KEY` or `BT-API-KEY`), shown only in this response; absent when created with `create_key: false`' }) })
  .meta({ id: 'ApplicationWithKey' })

export const applicationPage = pageOf(application, 'ApplicationPage')
