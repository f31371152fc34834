/**
 * Accepting an invitation: no API key, the link's one-time secret is the
 * credential. `GET /invitations/accept?token=…` is the page the e-mail links
 * to; its form posts (urlencoded) to `POST /invitations/accept`, which also
 * takes JSON `{token, first_name, last_name}` from programs (201 + the member).
 * Invalid links answer 404, expired ones 410, in both forms.
 */
import Router from '@koa/router'
import type { Context } from 'koa'
import * as contract from '../../../shared/contracts'
import { AppError, parse, ValidationError } from '../../app'
import { ACCEPT_PATH } from '../../app/invitations.service'
import { readFormText } from '../middleware/body'
import { INVITATION_PAGE_HEADERS, renderInvitationForm, renderInvitationMessage } from '../pages/invitation-page'
import type { AppState, RouteDeps } from '../types'

const FORM_LIMIT = '16kb'
const FORM_TYPE = 'application/x-www-form-urlencoded'

function sendPage(ctx: Context, status: number, html: string): void {
  ctx.set(INVITATION_PAGE_HEADERS)
  ctx.status = status
  ctx.type = 'text/html; charset=utf-8'
  ctx.body = html
}

/** Shows an expected failure as a page; anything else goes on to the problem+json handler (500). */
function sendErrorPage(ctx: Context, error: unknown): void {
  if (!(error instanceof AppError)) throw error
  const fields = Object.keys(error.errors ?? {})
  const message = fields.length ? `${error.message} (${fields.join(', ')})` : error.message
  sendPage(ctx, error.status, renderInvitationMessage('Invitation not accepted', message, true))
}

async function readForm(ctx: Context): Promise<Record<string, string>> {
  const raw = await readFormText(ctx, FORM_LIMIT)
  return Object.fromEntries(new URLSearchParams(raw))
}

export function invitationAcceptRoutes({ services, json }: RouteDeps) {
  const router = new Router<AppState>({ prefix: ACCEPT_PATH })

  router.get('/', async (ctx) => {
    try {
      const info = await services.invitations.describeLink(parse(contract.invitationLinkToken, ctx.query.token, 'token'))
      sendPage(ctx, 200, renderInvitationForm({ token: String(ctx.query.token), tenantName: info.tenant_name, email: info.email, expiresAt: info.expires_at }))
    } catch (error) {
      sendErrorPage(ctx, error)
    }
  })

  // The page's form: answers with a page, re-showing the form when a name is invalid.
  router.post('/', async (ctx, next) => {
    if (!ctx.is(FORM_TYPE)) return next()
    const form = await readForm(ctx)
    try {
      const info = await services.invitations.describeLink(parse(contract.invitationLinkToken, form.token, 'token'))
      try {
        const member = await services.invitations.accept(parse(contract.acceptInvitationBody, form), ctx.state.traceId)
        const name = member.user.first_name ?? member.user.email ?? 'there'
        sendPage(ctx, 201, renderInvitationMessage('Invitation accepted', `Welcome, ${name}! You are now an administrator of ${info.tenant_name}.`, false))
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error
        const view = { token: form.token, tenantName: info.tenant_name, email: info.email, expiresAt: info.expires_at }
        sendPage(ctx, 400, renderInvitationForm({ ...view, firstName: form.first_name, lastName: form.last_name, errors: error.errors }))
      }
    } catch (error) {
      sendErrorPage(ctx, error)
    }
  })

  router.post('/', json(), async (ctx) => {
    ctx.body = await services.invitations.accept(parse(contract.acceptInvitationBody, ctx.request.body), ctx.state.traceId)
    ctx.status = 201
  })

  return router
}
