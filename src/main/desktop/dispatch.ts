/**
 * One IPC call, end to end: resolve the channel against the contract, run its
 * handler, and turn the outcome into an `IpcResult`. Failures become the same
 * problem documents the REST server sends; anything that is not an AppError is
 * a bug and is answered with a generic 500 that says nothing about internals
 * (a database error's message can hold statement values). A payload holding
 * an own `__proto__` key anywhere is refused before any handler runs, as REST
 * refuses such a body: a 400 naming where it is.
 */
import { CHANNEL_PREFIX, IPC_METHODS, type IpcResult, type Namespace } from '../../shared/ipc'
import type { Logger } from '../infra/logger'
import { prototypeKeyPath } from '../../shared/prototype-keys'
import { AppError, problemOf, problemOfCode, ValidationError } from '../app'
import type { DesktopHandlers } from './handlers'

type AnyHandler = (...args: unknown[]) => Promise<unknown>

function lookup(channel: unknown): { namespace: Namespace; method: string } | undefined {
  if (typeof channel !== 'string' || !channel.startsWith(CHANNEL_PREFIX)) return undefined
  const [namespace, method, ...rest] = channel.slice(CHANNEL_PREFIX.length).split('.')
  if (rest.length || !Object.hasOwn(IPC_METHODS, namespace)) return undefined
  const methods: readonly string[] = IPC_METHODS[namespace as Namespace]
  return methods.includes(method) ? { namespace: namespace as Namespace, method } : undefined
}

/** Runs the handler behind `channel` with `args`; never throws. */
export async function dispatch(handlers: DesktopHandlers, channel: unknown, args: unknown[], logger: Logger): Promise<IpcResult<unknown>> {
  const target = lookup(channel)
  if (!target) return { ok: false, problem: problemOfCode('unknown_channel') }
  const handler = (handlers[target.namespace] as Record<string, AnyHandler>)[target.method]
  try {
    const prototypeKey = prototypeKeyPath(args, 'args')
    if (prototypeKey !== undefined) throw ValidationError.field(prototypeKey, 'is a reserved key: a payload must not hold a __proto__ key')
    return { ok: true, value: await handler(...args) }
  } catch (error) {
    if (!(error instanceof AppError)) {
      const { name, code } = error as { name?: string; code?: string }
      logger.error({ err: { name, code }, channel }, 'IPC handler failed')
    }
    return { ok: false, problem: problemOf(error) }
  }
}
