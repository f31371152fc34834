/**
 * Ceiling for the HTTP figures: a bare Koa app with the same router and JSON
 * body parsing as the service, doing no work. Run as a child of bench/run.ts.
 */
import Router from '@koa/router'
import parse from 'co-body'
import Koa from 'koa'

const app = new Koa()
const router = new Router()
router.post('/tokens', async (ctx) => {
  const body = (await parse.json(ctx, { limit: 5 * 1024 * 1024, strict: false })) as { data?: unknown }
  ctx.status = 201
  ctx.body = { id: 'bench', type: 'token', received: typeof body.data }
})
router.get('/tokens/:id', (ctx) => {
  ctx.body = { id: ctx.params.id, type: 'card', data: { number: 'XXXXXXXXXXXX4242' } }
})
app.use(router.routes())
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number }
  process.stdout.write(`Tessera listening on http://127.0.0.1:${address.port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
