/**
 * RFC 7807 problem documents, the one shape every failure takes on the way
 * out of either door: the REST server answers with them and the IPC door
 * hands them to the renderer. An AppError becomes its own problem; anything
 * else is a bug, answered with a generic 500 that says nothing about the
 * internals (a database error's message can hold statement values).
 */
import type { Problem } from '../../shared/types'
import { AppError, ERRORS, type ErrorCode } from '../domain/errors'

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  503: 'Service Unavailable'
}

/** The standard title of an HTTP status. */
export function statusTitle(status: number): string | undefined {
  return TITLES[status]
}

/** A problem document; `type` names the code when there is one. */
export function problem(status: number, detail: string, extra: Partial<Problem> = {}): Problem {
  return {
    type: extra.code ? `https://tessera.local/problems/${extra.code}` : 'about:blank',
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    ...extra
  }
}

/** The problem of a code of the error table, with its status and (unless given) its message. */
export function problemOfCode(code: ErrorCode, detail: string = ERRORS[code].message, extra: Omit<Partial<Problem>, 'code'> = {}): Problem {
  return problem(ERRORS[code].status, detail, { code, ...extra })
}

/** The problem of any error: an AppError's own, else the generic 500. */
export function problemOf(error: unknown): Problem {
  if (!(error instanceof AppError)) return problemOfCode('internal_error')
  return problemOfCode(error.code, error.message, error.errors ? { errors: error.errors } : {})
}
