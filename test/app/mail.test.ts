import { describe, expect, it } from 'vitest'
import { deliveryErrorCode, retryDelayMs } from '../../src/main/app/mail.service'
import { startTestService } from '../helpers/service'

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
