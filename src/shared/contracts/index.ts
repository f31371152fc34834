/**
 * The REST contract: one zod schema per command and query, and one per
 * response body. The services validate with these, the OpenAPI document
 * (`GET /openapi.json`) is generated from them, and the renderer may use them.
 * Only `zod` and other `src/shared` modules may be imported here.
 */
export * from './access'
export * from './applications'
export * from './common'
export * from './invitations'
export * from './logs'
export * from './members'
export * from './sessions'
export * from './tokens'
