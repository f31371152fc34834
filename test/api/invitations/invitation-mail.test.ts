import { Writable } from 'node:stream'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'
import { decodeQuotedPrintable, reservePort, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp'

/** A pino logger whose lines the test can read. */
function capturingLogger() {
  const lines: string[] = []
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    }
  })
  return { logger: pino({ level: 'debug' }, destination), lines }
}

function linkIn(raw: string): string {
  const match = /http:\/\/127\.0\.0\.1:\d+\/invitations\/accept\?token=[A-Za-z0-9_%-]+/.exec(decodeQuotedPrintable(raw))
  if (!match) throw new Error('no acceptance link in the message')
  return match[0]
}

describe('invitation e-mail over SMTP', () => {
  let service: TestService | undefined
  let smtp: TestSmtpServer | undefined

  afterEach(async () => {
    await service?.stop()
    await smtp?.close()
    service = undefined
    smtp = undefined
  })

  it('delivers the invitation; the link in the message leads to the page and accepting makes an ADMIN member', async () => {
    smtp = await startSmtpServer()
    service = await startTestService({ mail: { host: '127.0.0.1', port: smtp.port, requireTLS: false, from: 'Tessera <vault@example.com>' } })
    const invitation = await service.request('POST', '/tenants/self/invitations', { body: { email: 'hedy@example.com' } })
    expect(invitation.status).toBe(201)
    await service.host.vault.services.mail.idle()

    expect(smtp.received).toHaveLength(1)
    const [message] = smtp.received
    expect(message.from).toBe('vault@example.com')
    expect(message.to).toEqual(['hedy@example.com'])
    expect(message.raw).toMatch(/^Subject: Invitation to join Test tenant on Tessera/m)
    const link = linkIn(message.raw)
    expect(link.startsWith(`${service.url}/invitations/accept?token=`)).toBe(true)

    const page = await fetch(link)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('hedy@example.com')

    const token = new URL(link).searchParams.get('token')
    const accepted = await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: 'Hedy', last_name: 'Lamarr' } })
    expect(accepted.status).toBe(201)
    const members = await service.request('GET', `/tenants/self/members?user_id=${accepted.body.user.id}`)
    expect(members.body.data).toEqual([expect.objectContaining({ role: 'ADMIN', user: { id: accepted.body.user.id, email: 'hedy@example.com', first_name: 'Hedy', last_name: 'Lamarr' } })])

    const [sent] = (await service.host.vault.services.mail.listOutbox({ page: 1, size: 100 })).data
    expect(sent).toMatchObject({ status: 'SENT', attempts: 1, sent_at: new Date(service.clock.now()).toISOString() })
    expect(sent).not.toHaveProperty('last_error')
  })

  it('refuses by default to send over a connection the server does not upgrade with STARTTLS, keeping the mail', async () => {
    smtp = await startSmtpServer()
    service = await startTestService({ mail: { host: '127.0.0.1', port: smtp.port, from: 'vault@example.com' } })
    const invitation = await service.request('POST', '/tenants/self/invitations', { body: { email: 'whitfield@example.com' } })
    expect(invitation.status).toBe(201)
    await service.host.vault.services.mail.idle()
    expect(smtp.received).toHaveLength(0)
    const [waiting] = (await service.host.vault.services.mail.listOutbox({ page: 1, size: 100 })).data
    expect(waiting).toMatchObject({ status: 'PENDING', attempts: 1 })
    expect(waiting.last_error).toMatch(/TLS/)
  })

  it('keeps the mail while SMTP is down, retries with backoff, and delivers it exactly once when the server is back', async () => {
    const port = await reservePort()
    const { logger, lines } = capturingLogger()
    service = await startTestService({ mail: { host: '127.0.0.1', port, requireTLS: false, from: 'vault@example.com' }, logger })
    const { mail, jobs } = service.host.vault.services
    const invitation = await service.request('POST', '/tenants/self/invitations', { body: { email: 'radia@example.com' } })
    expect(invitation.status).toBe(201)
    await mail.idle()

    const start = service.clock.now()
    let [waiting] = (await mail.listOutbox({ page: 1, size: 100 })).data
    expect(waiting).toMatchObject({ status: 'PENDING', attempts: 1, next_attempt_at: new Date(start + 30_000).toISOString() })
    expect(waiting.last_error).toMatch(/ECONNREFUSED/)

    // Not due yet: nothing is attempted. (The mail sweep starts delivery; `idle()` waits for it.)
    await jobs.runDueJobs()
    await mail.idle()
    expect((await mail.listOutbox({ page: 1, size: 100 })).data[0].attempts).toBe(1)

    service.clock.advance(30_000)
    await jobs.runDueJobs()
    await mail.idle()
    ;[waiting] = (await mail.listOutbox({ page: 1, size: 100 })).data
    expect(waiting).toMatchObject({ status: 'PENDING', attempts: 2, next_attempt_at: new Date(start + 30_000 + 60_000).toISOString() })

    smtp = await startSmtpServer(port)
    service.clock.advance(59_000)
    await jobs.runDueJobs()
    await mail.idle()
    expect(smtp.received).toHaveLength(0)

    // The mail sweep looks every 15 s: the retry due at +60 s goes out on its next look.
    service.clock.advance(15_000)
    await jobs.runDueJobs()
    await mail.idle()
    expect(smtp.received).toHaveLength(1)
    expect(smtp.received[0].to).toEqual(['radia@example.com'])
    const [sent] = (await mail.listOutbox({ page: 1, size: 100 })).data
    expect(sent).toMatchObject({ status: 'SENT', attempts: 3 })
    expect(sent).not.toHaveProperty('last_error')

    service.clock.advance(60 * 60_000)
    await jobs.runDueJobs()
    await mail.idle()
    await service.request('GET', '/tenants/self/invitations')
    await mail.idle()
    expect(smtp.received).toHaveLength(1)

    const token = new URL(linkIn(smtp.received[0].raw)).searchParams.get('token')!
    const logged = lines.join('')
    expect(logged).toContain('mail delivery failed')
    expect(logged).not.toContain(token)
    expect(logged).not.toContain('radia@example.com')
  })

  it('never delivers a link that a resend replaced while SMTP was down', async () => {
    const port = await reservePort()
    service = await startTestService({ mail: { host: '127.0.0.1', port, requireTLS: false } })
    const { mail, jobs } = service.host.vault.services
    const invitation = await service.request('POST', '/tenants/self/invitations', { body: { email: 'barbara@example.com' } })
    await mail.idle()
    const resent = await service.request('POST', `/tenants/self/invitations/${invitation.body.id}/resend`)
    expect(resent.status).toBe(200)
    await mail.idle()

    smtp = await startSmtpServer(port)
    service.clock.advance(60 * 60_000)
    await jobs.runDueJobs()
    await mail.idle()
    expect(smtp.received).toHaveLength(1)
    const token = new URL(linkIn(smtp.received[0].raw)).searchParams.get('token')
    const accepted = await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: 'Barbara', last_name: 'Liskov' } })
    expect(accepted.status).toBe(201)
  })
})
