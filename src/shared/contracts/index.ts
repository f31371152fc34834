/**
 * The contracts: one zod schema per command and query, and one per response
 * body. Both doors parse what callers send with these (REST from the query
 * string and body, IPC from the renderer's typed arguments), the services take
 * what they output, the OpenAPI document (`GET /openapi.json`) is generated
 * from them, and the renderer may use them. Only `zod`, `email-addresses` and
 * other `src/shared` modules may be imported here.
 */
export * from './access'
export * from './applications'
export * from './common'
export * from './fields'
export * from './invitations'
export * from './logs'
export * from './members'
export * from './outbox'
export * from './sessions'
export * from './tenants'
export * from './token-intents'
export * from './tokens'
export * from './vault'
export * from './webhooks'
