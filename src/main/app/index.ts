/**
 * What the doors (REST, IPC, CLI) use of the application layer besides the
 * services: parsing what callers send with the contracts, the errors they
 * throw and catch, who acts, and the problem documents failures become.
 */
export type { Actor } from '../domain/actor'
export * from '../domain/errors'
export { parseCvcRetention } from '../domain/cvc-retention'
export { parse } from '../domain/validation'
export { problemOf, problemOfCode } from './problem'
