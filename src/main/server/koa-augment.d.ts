export {}
import 'koa'

declare module 'koa' {
  interface Request {
    /** The parsed JSON body, set by the body middleware. */
    body?: unknown
  }
}
