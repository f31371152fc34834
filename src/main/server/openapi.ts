/**
 * The OpenAPI 3.1 document of the REST interface, generated from the zod
 * contracts the services validate with (src/shared/contracts). Every route is
 * listed here once; a test holds this list and the mounted routers equal, and
 * the API tests check every response they see against it.
 */
import { z } from 'zod'
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from 'zod-openapi'
import packageJson from '../../../package.json'
import * as contract from '../../shared/contracts'
import { TOKENIZE_MAX_TOKENS } from '../../shared/token-rules'

export type OpenApiDocument = ReturnType<typeof createDocument>

const API_KEY_HEADER = 'SVC-API-KEY'

const JSON_TYPE = 'application/json'
const MERGE_PATCH_TYPE = 'application/merge-patch+json'
const PROBLEM_TYPE = 'application/problem+json'
const FORM_TYPE = 'application/x-www-form-urlencoded'
const HTML_TYPE = 'text/html'

/** Why each error status is answered; every error body is a problem document. */
const ERROR_REASONS = {
  400: 'Invalid input: `errors` names each bad field.',
  401: `Missing, unknown or expired \`${API_KEY_HEADER}\`.`,
  403: 'The caller lacks the permission.',
  404: 'No such entity in the caller’s tenant.',
  409: 'Conflicts with the current state.',
  410: 'The invitation has expired.',
  413: 'The body exceeds the size limit (5 MB by default).',
  415: 'The body has another `Content-Type` than the one this operation takes.',
  422: 'The request breaks a business rule.',
  503: 'The service cannot serve this request now.'
} as const

type ErrorStatus = keyof typeof ERROR_REASONS
type Reasons = Partial<Record<ErrorStatus, string>>

/** Token operations are also refused when no rule grants the permission on that token's containers. */
const TOKEN_REASONS: Reasons = { 403: 'The caller lacks the permission, or no rule grants it on the token’s containers.' }

/** The statuses a body-taking operation may add: bad JSON, too large, wrong media type. */
const BODY_ERRORS: ErrorStatus[] = [400, 413, 415]

const tokenId = z.object({ id: z.string().meta({ description: 'The token id' }) })
const entityId = z.object({ id: z.uuid().meta({ description: 'A malformed id reads as not found (404)' }) })

const applicationKeyPath = entityId.extend({ keyId: z.uuid().meta({ description: 'The key’s id; a malformed one reads as not found (404)' }) })

const html = z.string().meta({ description: 'An HTML page for people' })
const page = (description: string) => ({ description, content: { [HTML_TYPE]: { schema: html } } })
/** The invitation routes answer programs (JSON) with a problem document and the acceptance page's form with a page. */
const problemOrPage = (description: string) => ({ description, content: { [PROBLEM_TYPE]: { schema: contract.problem }, [HTML_TYPE]: { schema: html } } })

const LINK_INVALID = 'The link was used, replaced by a newer one, or its invitation deleted.'

interface Route {
  summary: string
  description?: string
  tag: string
  /** Needed permissions, shown in the description. */
  permissions?: string[]
  /** No API key (the route is served before authentication). */
  open?: boolean
  path?: z.ZodObject
  query?: z.ZodObject
  body?: { schema: z.ZodType; type?: string; optional?: boolean }
  responses: ZodOpenApiResponsesObject
  errors?: ErrorStatus[]
  /** Reasons that differ from ERROR_REASONS for this operation. */
  reasons?: Reasons
}

function jsonResponse(description: string, schema: z.ZodType) {
  return { description, content: { [JSON_TYPE]: { schema } } }
}

const noContent = (description: string) => ({ description })

function errorResponses(statuses: readonly ErrorStatus[], reasons: Reasons): ZodOpenApiResponsesObject {
  return Object.fromEntries(
    [...new Set(statuses)].sort((a, b) => a - b).map((status) => [status, { description: reasons[status] ?? ERROR_REASONS[status], content: { [PROBLEM_TYPE]: { schema: contract.problem } } }])
  )
}

function operation(id: string, route: Route): ZodOpenApiOperationObject {
  const statuses: ErrorStatus[] = [...(route.errors ?? [])]
  if (!route.open) statuses.push(401)
  if (route.permissions) statuses.push(403)
  if (route.body) statuses.push(...BODY_ERRORS)
  if (route.query) statuses.push(400)
  if (route.path) statuses.push(404)
  const permissionNote = route.permissions && `Permission: ${route.permissions.map((p) => `\`${p}\``).join(' and ')}.`
  const description = [route.description, permissionNote].filter(Boolean).join('\n\n')
  return {
    operationId: id,
    summary: route.summary,
    description: description || undefined,
    tags: [route.tag],
    security: route.open ? [] : undefined,
    requestParams: route.path || route.query ? { ...(route.path && { path: route.path }), ...(route.query && { query: route.query }) } : undefined,
    requestBody: route.body && { required: !route.body.optional, content: { [route.body.type ?? JSON_TYPE]: { schema: route.body.schema } } },
    responses: { ...route.responses, ...errorResponses(statuses, route.reasons ?? {}) }
  }
}

const TAGS = [
  { name: 'Tokens', description: 'Sensitive values stored as tokens; responses show what the caller’s transform allows.' },
  { name: 'Token intents', description: 'Card or bank data held for up to 24 hours until `POST /tokens` converts it into a token (Basis Theory’s token intents).' },
  { name: 'Tokenize', description: 'Many tokens in one request, in any JSON shape: tokenize creates them atomically, detokenize reads them into the shape.' },
  { name: 'Logs', description: 'The audit log: one entry per operation, reads included.' },
  { name: 'Applications', description: 'API keys with their permissions and access rules.' },
  { name: 'Permissions', description: 'The permission catalogue.' },
  { name: 'Sessions', description: 'Short-lived keys for browsers and phones: a public application creates one, a private application authorizes it.' },
  { name: 'Tenant', description: 'The tenant the caller belongs to.' },
  { name: 'Members', description: 'The people who administer the tenant.' },
  { name: 'Invitations', description: 'E-mail invitations to become a member, and accepting them.' },
  { name: 'Webhooks', description: 'Signed POSTs of events (tokens, applications, sessions, members, invitations) to URLs of the tenant’s choosing (Basis Theory’s webhooks).' },
  { name: 'Service', description: 'Health and this document.' }
]

const PATHS: ZodOpenApiPathsObject = {
  '/tokens': {
    post: operation('createToken', {
      tag: 'Tokens',
      summary: 'Create a token',
      description:
        'Validates the data by type, evaluates the id, fingerprint and search-index expressions, and stores the data encrypted. With `token_intent_id` the token intent supplies the type and data and is consumed in the same transaction; an unknown, expired or already converted intent is a 400 naming `token_intent_id`.',
      permissions: ['token:create'],
      body: { schema: z.union([contract.createTokenBody, contract.convertTokenIntentBody]) },
      responses: {
        201: jsonResponse('The created token, shaped by the caller’s transform.', contract.token),
        200: jsonResponse('With `deduplicate_token`: the existing token of the same type and fingerprint (only `id`, `type`, `tenant_id`, `fingerprint` and `containers` when the caller cannot read it).', contract.token)
      },
      errors: [409],
      reasons: { ...TOKEN_REASONS, 409: 'A token with this id already exists.' }
    }),
    get: operation('listTokens', {
      tag: 'Tokens',
      summary: 'List tokens',
      description:
        'Newest first. Tokens the caller may not read are left out and not counted. Filter by metadata with `metadata.<key>=<value>` parameters (exact key, case-insensitive value; several are ANDed; a repeated key is ignored).',
      permissions: ['token:read'],
      query: contract.listTokensQuery.omit({ metadata: true }),
      responses: { 200: jsonResponse('One page of tokens, each shaped by the caller’s transform.', contract.tokenPage) }
    })
  },
  '/tokens/{id}': {
    get: operation('getToken', {
      tag: 'Tokens',
      summary: 'Get a token',
      permissions: ['token:read'],
      path: tokenId,
      responses: { 200: jsonResponse('The token, shaped by the caller’s transform.', contract.token) },
      reasons: TOKEN_REASONS
    }),
    patch: operation('updateToken', {
      tag: 'Tokens',
      summary: 'Update a token',
      description:
        'An RFC 7386 merge patch: `data`, `mask` and `metadata` merge (`null` removes a key), the other fields replace. When the update makes the token a duplicate of one the caller cannot read, the response leaves out `data`, `metadata`, `fingerprint_expression`, `search_indexes` and `mask`.',
      permissions: ['token:update'],
      path: tokenId,
      body: { schema: contract.updateTokenBody, type: MERGE_PATCH_TYPE },
      responses: { 200: jsonResponse('The updated token, shaped by the caller’s transform.', contract.token) },
      reasons: TOKEN_REASONS
    }),
    delete: operation('deleteToken', {
      tag: 'Tokens',
      summary: 'Delete a token',
      description: 'Erases the data for good; a reference remains for audit.',
      permissions: ['token:delete'],
      path: tokenId,
      responses: { 204: noContent('Deleted.') },
      reasons: TOKEN_REASONS
    })
  },
  '/v2/tokens': {
    get: operation('listTokensV2', {
      tag: 'Tokens',
      summary: 'List tokens (v2, cursor pages)',
      description:
        'Basis Theory’s v2 list. Newest first (tokens created in the same millisecond by id, descending). Tokens the caller may not read are left out. Every filter given must hold; metadata values match exactly (case-sensitive). Pass `pagination.next` as `start` for the next page, and keep following it until it is absent: a page may be short or empty and still have a `next` when the request passed over 1,000 tokens it could not keep (tokens the caller may not read, or outside a filter the index does not apply, such as metadata values in another case). A `start` this list did not give is a 400 naming `start`.',
      permissions: ['token:read'],
      query: contract.listTokensV2Query.omit({ metadata: true }).extend({
        metadata: z.string().optional().meta({
          description: 'A JSON object of metadata keys and values, e.g. `{"customer":"c-42"}`; `metadata.<key>=<value>` parameters may be given instead or as well'
        })
      }),
      responses: { 200: jsonResponse('One page of tokens, each shaped by the caller’s transform.', contract.tokenCursorPage) }
    })
  },
  '/v2/tokens/search': {
    post: operation('searchTokensV2', {
      tag: 'Tokens',
      summary: 'Search tokens (v2, cursor pages)',
      description:
        'Basis Theory’s v2 search: `query` is one `field:value` term, or two joined by `AND` where one is a `container` term. OR, NOT, parentheses, ranges, wildcards and other fields are a 400 naming `query`. Results come newest first, shown under the transform of the caller’s `token:search` grants; tokens no grant covers are left out. Paged like `GET /v2/tokens`.',
      permissions: ['token:search'],
      body: { schema: contract.searchTokensV2Body },
      responses: { 200: jsonResponse('One page of the tokens found, each shaped by the caller’s transform.', contract.tokenCursorPage) }
    })
  },
  '/token-intents': {
    post: operation('createTokenIntent', {
      tag: 'Token intents',
      summary: 'Create a token intent',
      description:
        'Validates and encrypts the data like a token’s and answers with its masked details and fingerprint, never the data. The intent is deleted 24 hours later (when the CVC retention window ends, if it holds a CVC and that is sooner) unless converted first.',
      permissions: ['token:create'],
      body: { schema: contract.createTokenIntentBody },
      responses: { 201: jsonResponse('The token intent.', contract.tokenIntent) },
      reasons: { 403: 'The caller lacks the permission on the containers a token of this type goes to by default.' }
    })
  },
  '/token-intents/{id}': {
    get: operation('getTokenIntent', {
      tag: 'Token intents',
      summary: 'Get a token intent',
      permissions: ['token:read'],
      path: entityId,
      responses: { 200: jsonResponse('The token intent, without its data.', contract.tokenIntent) },
      reasons: { 403: 'The caller lacks the permission on the containers a token of this type goes to by default.', 404: 'No such token intent: unknown, expired or converted.' }
    }),
    delete: operation('deleteTokenIntent', {
      tag: 'Token intents',
      summary: 'Delete a token intent',
      permissions: ['token:delete'],
      path: entityId,
      responses: { 204: noContent('Deleted.') },
      reasons: { 403: 'The caller lacks the permission on the containers a token of this type goes to by default.', 404: 'No such token intent: unknown, expired or converted.' }
    })
  },
  '/tokenize': {
    post: operation('tokenize', {
      tag: 'Tokenize',
      summary: 'Tokenize any JSON shape',
      description: `Atomic: every element is validated and checked for \`token:create\` on its containers before anything is stored; one failure and nothing is created. At most ${TOKENIZE_MAX_TOKENS.toLocaleString('en')} tokens per request (plain values and token requests together); more is a 400 naming \`(body)\`. Errors name elements by path, e.g. \`[3].data.number\`.`,
      permissions: ['token:create'],
      body: { schema: contract.tokenizeBody },
      responses: { 200: jsonResponse('The same shape with tokens in place of the values.', contract.tokenizeResult) },
      errors: [409],
      reasons: { ...TOKEN_REASONS, 409: 'The request names the same token id twice, or an id that already exists.' }
    })
  },
  '/detokenize': {
    post: operation('detokenize', {
      tag: 'Tokenize',
      summary: 'Detokenize any JSON shape',
      description:
        'Basis Theory’s detokenize. Tokens are shown as `GET /tokens/{id}` shows them to the caller (its transform applies); each token read is audited. At most 10,000 expressions per request; their filters share the request’s expression time budget.',
      permissions: ['token:read'],
      body: { schema: contract.detokenizeBody },
      responses: { 200: jsonResponse('The same shape with each expression replaced by its value.', contract.detokenizeResult) },
      reasons: {
        ...TOKEN_REASONS,
        400: 'Invalid input: `errors` names each string holding a malformed expression, a failing filter, or an id that names no token.',
        413: 'The body exceeds the size limit (5 MB by default), its filters need more time than one request may spend on expressions, or the response would carry more than 20,000,000 characters of values.'
      }
    })
  },
  '/logs': {
    get: operation('listLogs', {
      tag: 'Logs',
      summary: 'List log entries',
      description: 'Newest first.',
      permissions: ['log:read'],
      query: contract.listLogsQuery,
      responses: { 200: jsonResponse('One page of log entries.', contract.logPage) }
    })
  },
  '/logs/entity-types': {
    get: operation('listLogEntityTypes', {
      tag: 'Logs',
      summary: 'List the entity types log entries name',
      permissions: ['log:read'],
      responses: { 200: jsonResponse('Every entity type, not paginated.', contract.entityTypeList) }
    })
  },
  '/applications': {
    post: operation('createApplication', {
      tag: 'Applications',
      summary: 'Create an application',
      description: 'A caller cannot grant management permissions it does not hold itself (403).',
      permissions: ['application:create'],
      body: { schema: contract.createApplicationRequest },
      responses: { 201: jsonResponse('The application with its first key (unless `create_key` is false), whose value is shown only here.', contract.applicationWithKey) }
    }),
    get: operation('listApplications', {
      tag: 'Applications',
      summary: 'List applications',
      description: 'Newest first; expired applications are left out.',
      permissions: ['application:read'],
      query: contract.listApplicationsQuery,
      responses: { 200: jsonResponse('One page of applications, without keys.', contract.applicationPage) }
    })
  },
  '/applications/key': {
    get: operation('getApplicationByKey', {
      tag: 'Applications',
      summary: 'Get the calling application',
      description: `The application whose key is in \`${API_KEY_HEADER}\`.`,
      permissions: ['application:read'],
      responses: { 200: jsonResponse('The application, without its key.', contract.application) },
      errors: [404]
    })
  },
  '/applications/{id}': {
    get: operation('getApplication', {
      tag: 'Applications',
      summary: 'Get an application',
      permissions: ['application:read'],
      path: entityId,
      responses: { 200: jsonResponse('The application, without its key.', contract.application) }
    }),
    put: operation('updateApplication', {
      tag: 'Applications',
      summary: 'Update an application',
      description: 'Replaces `name`, `permissions` and `rules`; the type cannot change.',
      permissions: ['application:update'],
      path: entityId,
      body: { schema: contract.updateApplicationRequest },
      responses: { 200: jsonResponse('The updated application, without its key.', contract.application) }
    }),
    delete: operation('deleteApplication', {
      tag: 'Applications',
      summary: 'Delete an application',
      description: 'Its keys, and the sessions it created or authorized, stop working at once.',
      permissions: ['application:delete'],
      path: entityId,
      responses: { 204: noContent('Deleted.') }
    })
  },
  '/applications/{id}/regenerate': {
    post: operation('regenerateApplicationKey', {
      tag: 'Applications',
      summary: 'Regenerate an application’s key',
      description: 'Creates a new key and deletes every other key of the application: they stop working at once.',
      permissions: ['application:update'],
      path: entityId,
      responses: { 200: jsonResponse('The application with its new key, shown only here.', contract.applicationWithKey) }
    })
  },
  '/applications/{id}/keys': {
    post: operation('createApplicationKey', {
      tag: 'Applications',
      summary: 'Create an application key',
      description: 'One more key for the application; its other keys keep working. Takes no body.',
      permissions: ['application:update'],
      path: entityId,
      responses: { 201: jsonResponse('The new key with its value, shown only here.', contract.applicationKey) }
    }),
    get: operation('listApplicationKeys', {
      tag: 'Applications',
      summary: 'List an application’s keys',
      description: 'Oldest first, as a bare array (not paginated), without key values.',
      permissions: ['application:read'],
      path: entityId,
      query: contract.listApplicationKeysQuery,
      responses: { 200: jsonResponse('Every key of the application.', contract.applicationKeyList) }
    })
  },
  '/applications/{id}/keys/{keyId}': {
    get: operation('getApplicationKey', {
      tag: 'Applications',
      summary: 'Get an application key',
      permissions: ['application:read'],
      path: applicationKeyPath,
      responses: { 200: jsonResponse('The key, without its value.', contract.applicationKey) }
    }),
    delete: operation('deleteApplicationKey', {
      tag: 'Applications',
      summary: 'Delete an application key',
      description: 'That key stops working at once; the application and its other keys stay.',
      permissions: ['application:update'],
      path: applicationKeyPath,
      responses: { 204: noContent('Deleted.') }
    })
  },
  '/permissions': {
    get: operation('listPermissions', {
      tag: 'Permissions',
      summary: 'List permissions',
      description: 'Open to any authenticated caller.',
      query: contract.permissionsQuery,
      responses: { 200: jsonResponse('The permissions, in catalogue order.', contract.permissionList) }
    })
  },
  '/sessions': {
    post: operation('createSession', {
      tag: 'Sessions',
      summary: 'Create a session',
      description: 'Only a public application’s key may create one. Takes no body (an empty JSON object is tolerated). The session has no access until it is authorized.',
      body: { schema: contract.createSessionBody, optional: true },
      responses: { 201: jsonResponse('The session key and the nonce that authorizes it.', contract.sessionCreated) },
      errors: [403],
      reasons: { 403: 'The key is not a public application’s.' }
    }),
    get: operation('listSessions', {
      tag: 'Sessions',
      summary: 'List active sessions',
      description: 'Sessions that have not expired or been revoked, newest first, without their keys or nonces. Each listed session is written to the audit log.',
      permissions: ['application:read'],
      query: contract.listSessionsQuery,
      responses: { 200: jsonResponse('One page of sessions.', contract.sessionPage) }
    })
  },
  '/sessions/{id}': {
    delete: operation('revokeSession', {
      tag: 'Sessions',
      summary: 'Revoke a session',
      description: 'Its key gets 401 at once.',
      permissions: ['application:delete'],
      path: entityId,
      responses: { 204: noContent('Revoked.') }
    })
  },
  '/sessions/authorize': {
    post: operation('authorizeSession', {
      tag: 'Sessions',
      summary: 'Authorize a session',
      description: 'Only a private application’s key may authorize one, and it grants no more than it holds.',
      body: { schema: contract.authorizeSessionBody },
      responses: { 204: noContent('Authorized.') },
      errors: [403, 404, 409],
      reasons: { 403: 'The key is not a private application’s, or the grant exceeds what it holds.', 404: 'No unexpired session has this nonce.', 409: 'The nonce has already been used.' }
    })
  },
  '/tenants/self': {
    get: operation('getTenant', {
      tag: 'Tenant',
      summary: 'Get the caller’s tenant',
      description: 'In Basis Theory’s shape (`client.tenants.self.get()`).',
      permissions: ['tenant:read'],
      responses: { 200: jsonResponse('The tenant.', contract.tenant) }
    }),
    put: operation('updateTenant', {
      tag: 'Tenant',
      summary: 'Rename the caller’s tenant',
      permissions: ['tenant:update'],
      body: { schema: contract.updateTenantBody },
      responses: { 200: jsonResponse('The renamed tenant.', contract.tenant) }
    })
  },
  '/tenants/self/members': {
    get: operation('listMembers', {
      tag: 'Members',
      summary: 'List members',
      description: 'Newest first.',
      permissions: ['tenant:member:read'],
      query: contract.listMembersQuery,
      responses: { 200: jsonResponse('One page of members.', contract.memberPage) }
    })
  },
  '/tenants/self/members/{id}': {
    delete: operation('deleteMember', {
      tag: 'Members',
      summary: 'Delete a member',
      description: 'The member loses access to the tenant at once.',
      permissions: ['tenant:member:delete'],
      path: entityId,
      responses: { 204: noContent('Deleted.') },
      errors: [422],
      reasons: { 422: 'The tenant OWNER cannot be deleted.' }
    })
  },
  '/tenants/self/invitations': {
    post: operation('createInvitation', {
      tag: 'Invitations',
      summary: 'Invite someone',
      description: 'Sends a mail with a one-time acceptance link; the invitation expires after 72 hours.',
      permissions: ['tenant:invitation:create'],
      body: { schema: contract.createInvitationBody },
      responses: { 201: jsonResponse('The PENDING invitation.', contract.invitation) },
      errors: [409],
      reasons: { 409: 'The address already belongs to a member or has an invitation.' }
    }),
    get: operation('listInvitations', {
      tag: 'Invitations',
      summary: 'List invitations',
      description: 'Newest first.',
      permissions: ['tenant:invitation:read'],
      query: contract.listInvitationsQuery,
      responses: { 200: jsonResponse('One page of invitations.', contract.invitationPage) }
    })
  },
  '/tenants/self/invitations/{id}': {
    get: operation('getInvitation', {
      tag: 'Invitations',
      summary: 'Get an invitation',
      permissions: ['tenant:invitation:read'],
      path: entityId,
      responses: { 200: jsonResponse('The invitation.', contract.invitation) }
    }),
    delete: operation('deleteInvitation', {
      tag: 'Invitations',
      summary: 'Delete an invitation',
      description: 'Its link stops working.',
      permissions: ['tenant:invitation:delete'],
      path: entityId,
      responses: { 204: noContent('Deleted.') }
    })
  },
  '/tenants/self/invitations/{id}/resend': {
    post: operation('resendInvitation', {
      tag: 'Invitations',
      summary: 'Resend an invitation',
      description: 'PENDING again with `expires_at` = max(`expires_at`, now) + 72 hours, and a new link; earlier links stop working.',
      permissions: ['tenant:invitation:create', 'tenant:invitation:update'],
      path: entityId,
      responses: { 200: jsonResponse('The invitation.', contract.invitation) }
    })
  },
  '/invitations/accept': {
    get: {
      operationId: 'showInvitation',
      summary: 'Show the acceptance page',
      description: 'The page an invitation mail links to; its form posts to `POST /invitations/accept`. No API key: the link’s one-time token is the credential.',
      tags: ['Invitations'],
      security: [],
      requestParams: { query: contract.invitationLinkQuery },
      responses: {
        200: page('The acceptance form.'),
        400: page('The link’s token is missing or malformed.'),
        404: page(LINK_INVALID),
        410: page(ERROR_REASONS[410])
      }
    },
    post: {
      operationId: 'acceptInvitation',
      summary: 'Accept an invitation',
      description:
        'The invitee becomes an ADMIN member and the invitation is consumed. No API key: the link’s one-time token is the credential. Programs send JSON and get JSON; the acceptance page posts its form and gets a page.',
      tags: ['Invitations'],
      security: [],
      requestBody: { required: true, content: { [JSON_TYPE]: { schema: contract.acceptInvitationBody }, [FORM_TYPE]: { schema: contract.acceptInvitationBody } } },
      responses: {
        201: { description: 'The new member (JSON), or a welcome page (form).', content: { [JSON_TYPE]: { schema: contract.member }, [HTML_TYPE]: { schema: html } } },
        400: problemOrPage(ERROR_REASONS[400]),
        404: problemOrPage(LINK_INVALID),
        409: problemOrPage('This user is already a member of the tenant.'),
        410: problemOrPage(ERROR_REASONS[410]),
        ...errorResponses([413, 415], {})
      }
    }
  },
  '/webhooks': {
    post: operation('createWebhook', {
      tag: 'Webhooks',
      summary: 'Create a webhook',
      description:
        'Any http or https URL is accepted; deliveries go only to loopback addresses and to the hosts of `--webhook-allowed-hosts`, others are recorded as `blocked` in the delivery log. A tenant has at most 5 webhooks.',
      permissions: ['webhook:create'],
      body: { schema: contract.webhookBody },
      responses: { 201: jsonResponse('The webhook.', contract.webhook) },
      errors: [422],
      reasons: { 422: 'The tenant has 5 webhooks already.' }
    }),
    get: operation('listWebhooks', {
      tag: 'Webhooks',
      summary: 'List webhooks',
      description: 'Oldest first.',
      permissions: ['webhook:read'],
      query: contract.listWebhooksQuery,
      responses: { 200: jsonResponse('One page of webhooks.', contract.webhookPage) }
    })
  },
  '/webhooks/event-types': {
    get: operation('listWebhookEventTypes', {
      tag: 'Webhooks',
      summary: 'List event types',
      description: 'The names a webhook’s `events` may hold; any other name is a 400.',
      responses: { 200: jsonResponse('Every event type.', contract.webhookEventTypes) }
    })
  },
  '/webhooks/signing-key': {
    get: {
      operationId: 'getWebhookSigningKey',
      summary: 'Get the webhook signing key',
      description:
        'The vault’s RSA public key (SPKI, PEM) that `BT-SIGNATURE` verifies with: RSA-PSS with SHA-256 (salt length 32) over the exact body, which is canonical JSON (keys sorted, no white space). `BT-SIGNATURE-VERSION` is `tessera-rsa-pss-sha256-v1`. No API key (a Tessera extension).',
      tags: ['Webhooks'],
      security: [],
      responses: { 200: { description: 'The public key.', content: { 'application/x-pem-file': { schema: z.string().meta({ description: 'A PEM `PUBLIC KEY` block' }) } } } }
    }
  },
  '/webhooks/{id}': {
    get: operation('getWebhook', {
      tag: 'Webhooks',
      summary: 'Get a webhook',
      permissions: ['webhook:read'],
      path: entityId,
      responses: { 200: jsonResponse('The webhook.', contract.webhook) }
    }),
    put: operation('updateWebhook', {
      tag: 'Webhooks',
      summary: 'Replace a webhook',
      description: 'Replaces name, URL, notify e-mail and events; deliveries already queued go to the new URL.',
      permissions: ['webhook:update'],
      path: entityId,
      body: { schema: contract.webhookBody },
      responses: { 200: jsonResponse('The webhook.', contract.webhook) }
    }),
    delete: operation('deleteWebhook', {
      tag: 'Webhooks',
      summary: 'Delete a webhook',
      description: 'Its pending deliveries and its delivery log are deleted with it.',
      permissions: ['webhook:delete'],
      path: entityId,
      responses: { 204: noContent('Deleted.') }
    })
  },
  '/webhooks/{id}/deliveries': {
    get: operation('listWebhookDeliveries', {
      tag: 'Webhooks',
      summary: 'List a webhook’s deliveries',
      description: 'The delivery log (a Tessera extension): one entry per event sent to the webhook, newest first, with each attempt’s outcome, status code, duration and error code. Delivered, failed and blocked deliveries are kept for 30 days after they finished.',
      permissions: ['webhook:read'],
      path: entityId,
      query: contract.listWebhookDeliveriesQuery,
      responses: { 200: jsonResponse('One page of deliveries.', contract.webhookDeliveryPage) }
    })
  },
  '/health': {
    get: operation('health', {
      tag: 'Service',
      summary: 'Health check',
      description: 'For load balancers. An instance of a team vault answers 503 while its database does not answer (asked at most once a second, within 2 seconds), so that requests go to the other instances.',
      open: true,
      responses: { 200: jsonResponse('The service is up.', contract.health) },
      errors: [503],
      reasons: { 503: 'A team vault’s instance that cannot reach its database (`database_unavailable`).' }
    })
  },
  '/ping': {
    get: operation('ping', {
      tag: 'Service',
      summary: 'Ping',
      description: 'The same answer as `GET /health`, at the path Basis Theory’s SDKs call (`webhooks.ping()`). A key, if sent, is not checked.',
      open: true,
      responses: { 200: jsonResponse('The service is up.', contract.health) }
    })
  },
  '/openapi.json': {
    get: operation('openApiDocument', {
      tag: 'Service',
      summary: 'This OpenAPI document',
      open: true,
      responses: { 200: jsonResponse('The OpenAPI 3.1 document of this interface.', z.looseObject({ openapi: z.literal('3.1.0') })) }
    })
  }
}

const DESCRIPTION = `Tessera's tokenization service: sensitive values go in, tokens come out.

Every request carries the header \`${API_KEY_HEADER}\` (or \`BT-API-KEY\`, as Basis Theory's SDKs send it): an application's key or an authorized session's key; only \`GET /health\`, \`GET /ping\`, \`GET /openapi.json\`, \`GET /webhooks/signing-key\` and the invitation acceptance routes take none. Every response, errors included, carries \`BT-TRACE-ID\`: the request's own (printable ASCII, at most 128 characters) or, when it sent none or another, a new UUID; every audit log entry the request writes records it (\`trace_id\` in \`GET /logs\`). Errors are RFC 7807 problem documents (\`${PROBLEM_TYPE}\`); a 400 names every bad field in \`errors\`. Any request may also get 421 (its \`Host\` header is not a loopback name or a configured host), 405 (the path exists but not with this method) or 500 (an unexpected error, with no details).`

/** Formats say it all: zod's equivalent patterns (for uuid and date-time) only make the document harder to read. */
function dropPatternsOfFormats({ jsonSchema }: { jsonSchema: { format?: string; pattern?: string } }): void {
  if (jsonSchema.format !== undefined) delete jsonSchema.pattern
}

function buildDocument(): OpenApiDocument {
  return createDocument(
    {
      openapi: '3.1.0',
      info: { title: 'Tessera REST API', version: packageJson.version, description: DESCRIPTION },
      servers: [{ url: 'http://127.0.0.1:4390', description: 'A local `tessera serve` (the port is configurable)' }],
      tags: TAGS,
      security: [{ [API_KEY_HEADER]: [] }],
      components: {
        securitySchemes: { [API_KEY_HEADER]: { type: 'apiKey', in: 'header', name: API_KEY_HEADER, description: 'An application’s key or an authorized session’s key' } }
      },
      paths: withIdempotencyKeys(PATHS)
    },
    { override: dropPatternsOfFormats }
  )
}

const WRITE_METHODS = ['post', 'put', 'patch', 'delete'] as const

const idempotencyHeader = z.object({
  'BT-IDEMPOTENCY-KEY': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({
      description:
        'Makes a retry safe: the same key from the same caller within 24 hours replays the first response instead of running again (1–255 printable ASCII characters). Tokens are replayed without their data, a response holding a key or nonce is not replayed (409), and reads sent as POST run again.'
    })
})

const IDEMPOTENCY_REASONS = {
  400: 'Invalid input: `errors` names each bad field (a malformed `BT-IDEMPOTENCY-KEY` included).',
  409: 'A request with the same `BT-IDEMPOTENCY-KEY` is still running, succeeded with a response holding a key or nonce, which is not replayed, or was carried out but its response was lost (the service stopped before keeping it), and is not run again.',
  422: 'The `BT-IDEMPOTENCY-KEY` was already used for a different request (method, path or body).'
}

/** Every keyed write takes `BT-IDEMPOTENCY-KEY` (middleware/idempotency.ts), and may answer its 409 and 422. */
function withIdempotencyKeys(paths: ZodOpenApiPathsObject): ZodOpenApiPathsObject {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => {
      const operations = { ...item }
      for (const method of WRITE_METHODS) {
        const op = operations[method]
        if (!op || op.security?.length === 0) continue
        const documented = op.responses as Record<string, { description: string } | undefined>
        // A status the operation answers already keeps its own reason (400) or gets this one beside it (409, 422).
        const problem = (status: 400 | 409 | 422) => {
          const existing = documented[status]
          const description = !existing ? IDEMPOTENCY_REASONS[status] : status === 400 ? existing.description : `${existing.description} ${IDEMPOTENCY_REASONS[status]}`
          return { description, content: { [PROBLEM_TYPE]: { schema: contract.problem } } }
        }
        operations[method] = {
          ...op,
          requestParams: { ...op.requestParams, header: idempotencyHeader },
          responses: { ...op.responses, 400: problem(400), 409: problem(409), 422: problem(422) }
        }
      }
      return [path, operations]
    })
  )
}

let built: OpenApiDocument | undefined

/** The document, built on first use and shared after (it depends only on the code). */
export function openApiDocument(): OpenApiDocument {
  return (built ??= buildDocument())
}
