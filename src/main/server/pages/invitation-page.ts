/**
 * The invitation acceptance page: a small, self-contained HTML document (no
 * scripts, no external resources) whose form posts back to the accept
 * endpoint. The link's secret sits in the URL, so the page sends no referrer
 * and may not be cached or framed.
 */
import { createHash } from 'node:crypto'
import { escapeHtml } from '../../infra/html'

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
main { max-width: 28rem; margin: 4rem auto; padding: 2rem; background: #fff; border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
h1 { font-size: 1.4rem; margin-top: 0; }
label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #9aa3b2; border-radius: 4px; }
button { margin-top: 1.5rem; padding: .6rem 1.2rem; font: inherit; color: #fff; background: #2f5bd3; border: 0; border-radius: 4px; cursor: pointer; }
.error { color: #a8071a; }
@media (prefers-color-scheme: dark) { body { background: #14171f; color: #e6e8ee; } main { background: #1f2430; } input { background: #14171f; color: inherit; } }
`

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64')

/** Response headers of every invitation page. */
export const INVITATION_PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store'
}

function page(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${content}
</main>
</body>
</html>
`
}

export interface InvitationFormView {
  token: string
  tenantName: string
  email: string
  expiresAt: string
  firstName?: string
  lastName?: string
  /** Field → messages, from a rejected submission. */
  errors?: Record<string, string[]>
}

/** The form: the invitee's names, and the token in a hidden field. */
export function renderInvitationForm(view: InvitationFormView): string {
  const errors = Object.entries(view.errors ?? {}).map(([field, messages]) => `<li>${escapeHtml(field)}: ${escapeHtml(messages.join('; '))}</li>`)
  return page(
    `Join ${view.tenantName}`,
    `<p>You are invited to join <strong>${escapeHtml(view.tenantName)}</strong> on Tessera as an administrator, as <strong>${escapeHtml(view.email)}</strong>.
The invitation expires at ${escapeHtml(view.expiresAt)}.</p>
${errors.length ? `<ul class="error">${errors.join('')}</ul>` : ''}
<form method="post" action="accept">
<input type="hidden" name="token" value="${escapeHtml(view.token)}">
<label for="first_name">First name</label>
<input id="first_name" name="first_name" required maxlength="200" autocomplete="given-name" value="${escapeHtml(view.firstName ?? '')}">
<label for="last_name">Last name</label>
<input id="last_name" name="last_name" required maxlength="200" autocomplete="family-name" value="${escapeHtml(view.lastName ?? '')}">
<button type="submit">Accept invitation</button>
</form>`
  )
}

/** A final message: the invitation was accepted, or the link cannot be used. */
export function renderInvitationMessage(title: string, message: string, isError: boolean): string {
  return page(title, `<p${isError ? ' class="error"' : ''}>${escapeHtml(message)}</p>`)
}
