/** Short-lived sessions: created by a public application, authorized by a private one. */
import { z } from 'zod'
import { grantFields } from './access'
import { timestamp } from './common'

/** `POST /sessions` takes no body; an empty JSON object is tolerated. */
export const createSessionBody = z.strictObject({}).optional()

/** `POST /sessions/authorize`. */
export const authorizeSessionBody = z
  .strictObject({
    nonce: z.string().min(1, 'is required').max(200, 'is not a nonce issued by this service').meta({ description: 'The one-time nonce from `POST /sessions`' }),
    ...grantFields('private', { session: true }),
    expires_at: z.string().max(100).optional().meta({ description: 'ISO 8601 time at which the session ends (default: 3 minutes after its creation)' })
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
