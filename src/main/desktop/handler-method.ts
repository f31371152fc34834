/**
 * The pieces every IPC handler table is built from: a handler that parses its
 * untrusted arguments with a schema before it runs, and the argument schemas
 * the tables share.
 */
import { z } from 'zod'
import type { MethodOf, Namespace, TesseraApi } from '../../shared/ipc'
import { parse } from '../app'

/** The handler of each channel: untrusted arguments in, the contract's result out. */
export type DesktopHandlers = {
  [N in Namespace]: { [M in MethodOf<N>]: TesseraApi[N][M] extends (...args: never[]) => infer R ? (...args: unknown[]) => R : never }
}

/** `.` and `..` are path segments URLs resolve away: `/applications/{id}/keys/..` would be `/applications/{id}/`. */
export const isDotSegment = (value: string): boolean => value === '.' || value === '..'
export const DOT_SEGMENT_REFUSED = 'cannot be "." or ".."'

/** An entity id, as sent in a REST path on a team vault: no id of the vault is `.` or `..`. */
export const id = z
  .string()
  .min(1, 'is required')
  .max(400, 'is too long')
  .refine((value) => !isDotSegment(value), DOT_SEGMENT_REFUSED)
/** A request body: an object, whose fields the command's contract then checks (field paths as REST names them). */
export const body = z.record(z.string(), z.unknown())
export const keyVersion = z.number().int('must be a whole number').min(1, 'must be 1 or more').max(2 ** 31 - 1)

/** Wraps a handler so its arguments are checked first; errors name `args[i].field`. */
export function method<S extends z.ZodType, R>(schema: S, run: (args: z.infer<S>) => Promise<R>): (...args: unknown[]) => Promise<R> {
  return async (...args: unknown[]) => run(parse(schema, args, 'args'))
}

export const none = z.tuple([])
