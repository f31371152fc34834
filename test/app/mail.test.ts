import { describe, expect, it, vi } from 'vitest'
import { deliveryErrorCode, retryDelayMs } from '../../src/main/app/mail.service'
import { startTestService } from '../helpers/service'
import { startSmtpServer, startStallingSmtpServer } from '../helpers/smtp'

describe('retryDelayMs', () => {
  it('doubles from 30 seconds and caps at one hour', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000])
    expect(retryDelayMs(8)).toBe(60 * 60_000)
    expect(retryDelayMs(50)).toBe(60 * 60_000)
  })
})

describe('deliveryErrorCode', () => {
  it('keeps only error codes, never messages', () => {
    expect(deliveryErrorCode(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:25'), { code: 'ESOCKET', originalCode: 'ECONNREFUSED' }))).toBe(
      'ESOCKET:ECONNREFUSED'
    )
    expect(deliveryErrorCode(Object.assign(new Error('550 no such user ada@example.com'), { code: 'EENVELOPE', responseCode: 550 }))).toBe('EENVELOPE:550')
    expect(deliveryErrorCode(new Error('anything'))).toBe('SEND_FAILED')
    expect(deliveryErrorCode({ code: 'has spaces and ada@example.com' })).toBe('SEND_FAILED')
  })
})

describe('the outbox list', () => {
  it('pages in SQL with a real count, past the 500 mails the desktop once loaded at most', async () => {
    const service = await startTestService()
    try {
      const { mail, context } = service.host.vault.services
      const now = service.clock.now()
      await context.writes.run(async (tx) => {
        for (let i = 0; i < 501; i++) {
          const body = { text: `mail ${i}`, html: `<p>mail ${i}</p>`, link: `https://example.com/${i}` }
          await mail.enqueue(tx, { tenantId: service.tenantId, recipient: `user${i}@example.com`, subject: `Mail ${i}`, body }, now + i)
        }
      })
      const last = await mail.listOutbox({ status: 'PENDING', page: 6, size: 100 })
      expect(last.pagination).toEqual({ total_items: 501, page_number: 6, page_size: 100, total_pages: 6 })
      // Newest first: the one mail on the last page is the first one queued.
      expect(last.data).toEqual([expect.objectContaining({ recipient: 'user0@example.com', status: 'PENDING', link: 'https://example.com/0' })])
      expect((await mail.listOutbox({ status: 'SENT', page: 1, size: 20 })).pagination.total_items).toBe(0)
    } finally {
      await service.stop()
    }
  })
})

describe('a stalling SMTP server', () => {
  const MINUTE = 60_000
  const REVEALING_APP = { name: 'Checkout', type: 'private', rules: [{ priority: 1, container: '/', transform: 'reveal', permissions: ['token:create', 'token:read'] }] }
  const smtpAt = (port: number) => ({ host: '127.0.0.1', port, requireTLS: false })

  it('holds up no other sweep, and stopping the service drops its send after the grace period', async () => {
    const smtp = await startStallingSmtpServer()
    // A deadline far beyond the test: only the sweeps not waiting and the grace period can let it finish.
    const service = await startTestService({ mail: { ...smtpAt(smtp.port), sendTimeoutMs: 10 * MINUTE, closeGraceMs: 50 }, cvcRetentionMs: MINUTE })
    try {
      const key = (await service.createApplication(REVEALING_APP)).key
      const card = await service.request('POST', '/tokens', { key, body: { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' } } })
      expect((await service.request('POST', '/tenants/self/invitations', { body: { email: 'hedy@example.com' } })).status).toBe(201)
      await vi.waitFor(() => expect(smtp.commandsSeen).toBe(1))

      service.clock.advance(10 * MINUTE)
      const results = await service.host.vault.services.jobs.runDueJobs()
      expect(results.find((result) => result.name === 'expire-cvc')).toEqual({ name: 'expire-cvc', processed: 1 })
      expect(results.find((result) => result.name === 'deliver-mail')).toEqual({ name: 'deliver-mail', processed: 0 })
      expect((await service.request('GET', `/tokens/${card.body.id}`, { key })).body.data.cvc).toBeUndefined()

      await service.pause()
      expect(smtp.closedByClient).toBe(1)
      // The mail stays due, to be retried after the restart.
      await service.resume()
      expect((await service.host.vault.services.mail.listOutbox({ page: 1, size: 10 })).data).toEqual([
        expect.objectContaining({ status: 'PENDING', attempts: 1, last_error: 'SMTP_SHUTDOWN' })
      ])
    } finally {
      await service.stop()
      await smtp.close()
    }
  })

  it('fails a send past its deadline, closes the connection, and retries the mail later', async () => {
    const stalling = await startStallingSmtpServer()
    // Long enough for the retry's real send on a busy machine.
    const service = await startTestService({ mail: { ...smtpAt(stalling.port), sendTimeoutMs: 1_000 } })
    let smtp: Awaited<ReturnType<typeof startSmtpServer>> | undefined
    try {
      const { mail } = service.host.vault.services
      expect((await service.request('POST', '/tenants/self/invitations', { body: { email: 'hedy@example.com' } })).status).toBe(201)
      await mail.idle()
      expect((await mail.listOutbox({ page: 1, size: 10 })).data).toEqual([expect.objectContaining({ status: 'PENDING', attempts: 1, last_error: 'SMTP_TIMEOUT' })])
      await vi.waitFor(() => expect(stalling.closedByClient).toBe(1))

      // The server recovers on the same port; the retry is due 30 s later.
      await stalling.close()
      smtp = await startSmtpServer(stalling.port)
      expect(await mail.deliverDue()).toBe(0)
      service.clock.advance(retryDelayMs(1))
      expect(await mail.deliverDue()).toBe(1)
      expect(smtp.received.map((message) => message.to)).toEqual([['hedy@example.com']])
      expect((await mail.listOutbox({ page: 1, size: 10 })).data).toEqual([expect.objectContaining({ status: 'SENT', attempts: 2 })])
    } finally {
      await service.stop()
      await stalling.close()
      await smtp?.close()
    }
  })
})

