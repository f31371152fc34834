/** Short-lived sessions: created by a public application, authorized by a private one. */
import { z } from 'zod'
import { accessRuleView, grantFields, permission } from './access'
import { pageOf, pageQuery, timestamp } from './common'

/** `POST /sessions` takes no body; an empty JSON object is tolerated. */
export const createSessionBody = z.strictObject({}).optional()

/** `POST /sessions/authorize`. */
export const authorizeSessionBody = z
  .strictObject({
    nonce: z.string().min(1, 'is required').max(200, 'is not a nonce issued by this service').meta({ description: 'The one-time nonce from `POST /sessions`' }),
    ...grantFields('private', { session: true }),
    expires_at: z.string().max(100).optional().meta({ description: 'ISO 8601 time at which the session ends (default: 3 minutes after its creation; at most 24 hours ahead unless the server is configured otherwise)' })
  })
  .meta({ id: 'AuthorizeSessionRequest', description: 'At least one of `permissions` and `rules` must be non-empty; an application grants no more than it holds.' })

export type AuthorizeSessionInput = z.infer<typeof authorizeSessionBody>

export const sessionCreated = z
  .strictObject({
    session_key: z.string().meta({ description: 'The key the client uses as `SVC-API-KEY` once the session is authorized' }),
    nonce: z.string().meta({ description: 'Hand it to the private application that authorizes the session; works once' }),
    expires_at: timestamp
  })
  .meta({ id: 'SessionCreated' })

/** `GET /sessions`: active sessions, newest first. */
export const listSessionsQuery = z.strictObject(pageQuery(100))

export type ListSessionsQuery = z.infer<typeof listSessionsQuery>

/** A session as `GET /sessions` lists it: never its key or nonce. */
export const session = z
  .strictObject({
    id: z.uuid(),
    tenant_id: z.uuid(),
    application_id: z.uuid().meta({ description: 'The public application that created it' }),
    status: z.enum(['PENDING', 'AUTHORIZED']).meta({ description: '`PENDING` until a private application authorizes its nonce' }),
    authorized_by: z.uuid().optional().meta({ description: 'The private application that authorized it' }),
    authorized_at: timestamp.optional(),
    permissions: z.array(permission),
    rules: z.array(accessRuleView),
    expires_at: timestamp,
    created_at: timestamp
  })
  .meta({ id: 'Session' })

export const sessionPage = pageOf(session, 'SessionPage')
