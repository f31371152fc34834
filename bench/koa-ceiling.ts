/**
 * The Koa app of the HTTP ceilings: the same router and JSON body parsing as the
 * service, answering `POST /tokens` and `GET /tokens/{id}`. Bare Koa
 * (bench/bare-koa.ts) does nothing else; durable Koa (bench/durable-koa.ts)
 * first commits what an audited request must, through `durable`.
 */
import Router from '@koa/router'
import parse from 'co-body'
import Koa from 'koa'

/** What a request commits before it is answered. */
export interface DurableWrites {
  /** Commits a new token holding `data` and its audit row; resolves with its id. */
  create(data: unknown): Promise<string>
  /** Commits the audit row of a read. */
  read(id: string): Promise<void>
}

/** Serves the ceiling on a free loopback port, printing `<label> listening on <url>`; SIGTERM closes it, then `closed`. */
export function serveKoaCeiling(label: string, durable?: DurableWrites, closed: () => void = () => undefined): void {
  const app = new Koa()
  const router = new Router()
  router.post('/tokens', async (ctx) => {
    const body = (await parse.json(ctx, { limit: 5 * 1024 * 1024, strict: false })) as { data?: unknown }
    const id = durable ? await durable.create(body.data) : 'bench'
    ctx.status = 201
    ctx.body = { id, type: 'token', received: typeof body.data }
  })
  const answerRead = (ctx: Koa.Context) => {
    ctx.body = { id: ctx.params.id, type: 'card', data: { number: 'XXXXXXXXXXXX4242' } }
  }
  // Bare Koa's read stays synchronous: an await would add a promise to the ceiling.
  router.get(
    '/tokens/:id',
    durable
      ? async (ctx) => {
          await durable.read(ctx.params.id)
          answerRead(ctx)
        }
      : answerRead
  )
  app.use(router.routes())
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number }
    process.stdout.write(`${label} listening on http://127.0.0.1:${address.port}\n`)
  })
  process.on('SIGTERM', () => server.close(closed))
}
