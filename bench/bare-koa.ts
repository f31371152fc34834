/**
 * Ceiling for the HTTP figures: a bare Koa app with the same router and JSON
 * body parsing as the service, doing no work (bench/koa-ceiling.ts). Run as a
 * child of bench/run.ts.
 */
import { serveKoaCeiling } from './koa-ceiling'

serveKoaCeiling('Bare Koa', undefined, () => process.exit(0))
