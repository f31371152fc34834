/** Creating tokens: POST /tokens (validation, types, ids, containers, metadata, deduplication, access, audit) and the body limit. */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../../helpers/service'
import { breakLuhn, cardNumber, MERGE_PATCH } from '../../helpers/tokens'
import { UUID, FINGERPRINT, ROUTING, masked, service, masker, revealer, redactor, creator, pciOnly, now, post, create, get, logsOf, card, useTokensService } from './fixture'

useTokensService()

describe('tokens', () => {
  describe('POST /tokens', () => {
    it('creates a generic token with a UUID id and the type defaults, 201', async () => {
      const response = await post({ type: 'token', data: 'a secret' }, masker.key)
      expect(response.status).toBe(201)
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        tenant_id: service.tenantId,
        type: 'token',
        fingerprint: expect.stringMatching(FINGERPRINT),
        containers: ['/general/high/'],
        metadata: {},
        fingerprint_expression: '{{ data | stringify }}',
        created_by: masker.id,
        created_at: now()
      })
    })

    it('refuses an id that would carry the token data in plaintext', async () => {
      const number = cardNumber()
      const byExpression = await post({ id: '{{ data.number }}', type: 'card', data: { number } }, masker.key)
      expect(byExpression.status).toBe(400)
      expect(Object.keys(byExpression.body.errors)).toEqual(['id'])
      const byLiteral = await post({ id: `card-${number}`, type: 'card', data: { number } }, masker.key)
      expect(byLiteral.status).toBe(400)
      expect(JSON.stringify(byExpression.body)).not.toContain(number)
    })

    it('refuses a literal id holding the card or account number grouped by spaces, dashes or dots', async () => {
      const number = cardNumber(16)
      const groups = number.match(/\d{4}/g)!
      for (const id of [groups.join('-'), groups.join(' '), `card.${groups.join('.')}`]) {
        const response = await post({ id, type: 'card', data: { number } }, masker.key)
        expect([response.status, response.body.errors]).toEqual([400, { id: ['must not contain the token data'] }])
      }
      const bank = await post({ id: 'acct-1234-5678-9', type: 'bank', data: { routing_number: ROUTING, account_number: '123456789' } }, masker.key)
      expect([bank.status, bank.body.errors]).toEqual([400, { id: ['must not contain the token data'] }])
      expect((await logsOf(groups.join('-'))).length).toBe(0)
      const tokenized = await service.request('POST', '/tokenize', { key: masker.key, body: { card: { id: groups.join(' '), type: 'card', data: { number } } } })
      expect([tokenized.status, tokenized.body.errors]).toEqual([400, { 'card.id': ['must not contain the token data'] }])
    })

    it('refuses a literal id holding a long number of generic data grouped otherwise', async () => {
      for (const [variant, data] of [['a', '123-45-6789'], ['b', { person: { ssn: '123-45-6789' } }], ['c', { phone: 4155550123 }]] as const) {
        for (const literal of ['ssn 123 45 6789', 'ref-12.34.56.789', 'tel-415-555-0123']) {
          const id = `${literal} ${variant}`
          const response = await post({ id, type: 'token', data }, masker.key)
          const holds = literal.replace(/\D/g, '') === JSON.stringify(data).replace(/\D/g, '')
          expect([id, response.status]).toEqual([id, holds ? 400 : 201])
        }
      }
    })

    it('refuses metadata holding a card number, even grouped by spaces or dashes', async () => {
      const number = cardNumber(16)
      const groups = number.match(/\d{4}/g)!
      for (const note of [number, `card ${groups.join(' ')}`, `ref:${groups.join('-')}`]) {
        const response = await post({ type: 'card', data: { number }, metadata: { note } }, masker.key)
        expect(response.status).toBe(400)
        expect(response.body.errors).toEqual({ 'metadata.note': ['must not contain the token data'] })
        expect(JSON.stringify(response.body)).not.toContain(groups.join(''))
      }
    })

    it('refuses metadata holding a bank account number or a CVC, and accepts the public routing number', async () => {
      const data = { routing_number: ROUTING, account_number: '000123456789' }
      const account = await post({ type: 'bank', data, metadata: { account: '0001-2345-6789' } }, masker.key)
      expect(account.status).toBe(400)
      expect(account.body.errors).toEqual({ 'metadata.account': ['must not contain the token data'] })
      expect((await post({ type: 'bank', data, metadata: { bank: `routing ${ROUTING}` } }, masker.key)).status).toBe(201)
      const cvc = await post({ type: 'card', data: { number: cardNumber(), cvc: '123' }, metadata: { cvc: '123' } }, masker.key)
      expect(cvc.body.errors).toEqual({ 'metadata.cvc': ['must not contain the token data'] })
    })

    it('refuses metadata holding the whole data of a generic token, on create and on update', async () => {
      const inMetadata = await post({ type: 'token', data: 'Ada Lovelace', metadata: { note: 'Ada Lovelace' } }, masker.key)
      expect(inMetadata.status).toBe(400)
      expect(inMetadata.body.errors).toEqual({ 'metadata.note': ['must not contain the token data'] })
      const ofObject = await post({ type: 'token', data: { ssn: '078-05-1120' }, metadata: { ssn: '078-05-1120' } }, masker.key)
      expect(ofObject.body.errors).toEqual({ 'metadata.ssn': ['must not contain the token data'] })
      const patched = await post({ type: 'token', data: 'Grace Hopper' }, masker.key)
      const leak = await service.request('PATCH', `/tokens/${patched.body.id}`, { key: revealer.key, body: { metadata: { who: 'Grace Hopper' } }, contentType: MERGE_PATCH })
      expect(leak.status).toBe(400)
      expect(leak.body.errors).toHaveProperty(['metadata.who'])
    })

    it('accepts metadata that only shares words with the data', async () => {
      const shared = await post({ type: 'token', data: 'Sensitive Value', metadata: { nonSensitiveField: 'Non-Sensitive Value' } }, masker.key)
      expect(shared.status).toBe(201)
      expect(shared.body.metadata).toEqual({ nonSensitiveField: 'Non-Sensitive Value' })
      const number = cardNumber(16)
      const lastFour = await post({ type: 'card', data: { number }, metadata: { last4: number.slice(-4), note: 'for Ada Lovelace' } }, masker.key)
      expect(lastFour.status).toBe(201)
    })

    it('returns the plaintext to a caller whose create rule reveals', async () => {
      const data = { name: 'Ada', tags: ['x', 1, true, null] }
      const token = await create({ type: 'token', data })
      expect(token.data).toEqual(data)
    })

    it('refuses generic data holding a number JSON cannot carry exactly, naming it', async () => {
      const inexact = 'must be a finite number within ±9007199254740991; send larger numbers as strings'
      for (const [rawBody, field] of [
        ['{"type":"token","data":1e400}', 'data'],
        ['{"type":"token","data":{"a":[-1e400]}}', 'data.a[0]'],
        ['{"type":"token","data":12345678901234567890123}', 'data']
      ]) {
        const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody })
        expect([response.status, response.body.errors]).toEqual([400, { [field]: [inexact] }])
      }
      const { id } = await create({ type: 'token', data: 'x' })
      const patched = await service.request('PATCH', `/tokens/${id}`, { key: revealer.key, rawBody: '{"data":{"a":1e400}}', contentType: MERGE_PATCH })
      expect([patched.status, patched.body.errors]).toEqual([400, { 'data.a': [inexact] }])
      expect((await create({ type: 'token', data: { max: 9007199254740991, big: '12345678901234567890123' } })).data).toEqual({ max: 9007199254740991, big: '12345678901234567890123' })
    })

    it('accepts any JSON value as generic data', async () => {
      for (const data of [0, false, null, 'x', [1, [2]], { a: { b: {} } }]) {
        expect((await create({ type: 'token', data })).data).toEqual(data)
      }
    })

    it('accepts data nested 64 levels deep and refuses deeper data with 400', async () => {
      const nest = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
      const ok = await service.request('POST', '/tokens', { key: revealer.key, rawBody: `{"type":"token","data":${nest(64)}}` })
      expect(ok.status).toBe(201)
      for (const levels of [65, 100_000]) {
        const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: `{"type":"token","data":${nest(levels)}}` })
        expect(response.status).toBe(400)
        expect(Object.keys(response.body.errors)).toEqual(['data'])
      }
    })

    it('returns no data to a caller whose create rule redacts', async () => {
      const token = await create({ type: 'card', data: card() }, redactor.key)
      expect(token).not.toHaveProperty('data')
      expect(token).not.toHaveProperty('mask')
    })

    it('shows a card as XXXXXXXXXXXX4242 in data and mask for a masking caller, with the card defaults', async () => {
      const response = await post({ type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' } }, masker.key)
      expect(response.status).toBe(201)
      const view = { number: 'XXXXXXXXXXXX4242', expiration_month: 12, expiration_year: 2030 }
      expect(response.body).toMatchObject({
        type: 'card',
        data: view,
        mask: view,
        containers: ['/pci/high/'],
        fingerprint_expression: '{{ data.number }}'
      })
      expect(JSON.stringify(response.body)).not.toContain('4242424242424242')
      expect(JSON.stringify(response.body)).not.toContain('"123"')
    })

    it('shows the plaintext in data and the masked values in mask for a revealing caller', async () => {
      const data = card({ cvc: '9876' })
      const token = await create({ type: 'card', data })
      expect(token.data).toEqual(data)
      expect(token.mask).toEqual({ number: masked(data.number), expiration_month: 12, expiration_year: 2030 })
    })

    it('leaves absent expiration fields out of a card mask', async () => {
      const number = cardNumber()
      const token = await create({ type: 'card', data: { number } }, masker.key)
      expect(token.mask).toEqual({ number: masked(number) })
      expect(token.data).toEqual({ number: masked(number) })
    })

    it.each([13, 15, 19])('accepts a card number of %i digits', async (length) => {
      const number = cardNumber(length)
      expect((await create({ type: 'card', data: { number } })).data).toEqual({ number })
    })

    it('accepts a card expiring this month and a four-digit cvc', async () => {
      await create({ type: 'card', data: card({ expiration_month: 11, expiration_year: 2026, cvc: '1234' }) })
    })

    it('accepts an expired card (merchants keep them) and masks it as any other', async () => {
      const token = await create({ type: 'card', data: card({ expiration_month: 1, expiration_year: 2019 }) })
      expect(token.mask).toMatchObject({ expiration_month: 1, expiration_year: 2019 })
    })

    it.each([
      ['a number failing the Luhn check', { number: breakLuhn(cardNumber()) }, 'data.number'],
      ['a 12-digit number', { number: cardNumber(12) }, 'data.number'],
      ['a 20-digit number', { number: cardNumber(20) }, 'data.number'],
      ['a number with spaces', { number: '4242 4242 4242 4242' }, 'data.number'],
      ['a number with dashes', { number: '4242-4242-4242-4242' }, 'data.number'],
      ['a numeric number', { number: 4242424242424242 }, 'data.number'],
      ['a missing number', { expiration_month: 1, expiration_year: 2030 }, 'data.number'],
      ['month 0', card({ expiration_month: 0 }), 'data.expiration_month'],
      ['month 13', card({ expiration_month: 13 }), 'data.expiration_month'],
      ['a month given as a string', card({ expiration_month: '12' }), 'data.expiration_month'],
      ['a fractional month', card({ expiration_month: 1.5 }), 'data.expiration_month'],
      ['a two-digit year', card({ expiration_year: 30 }), 'data.expiration_year'],
      ['a year given as a string', card({ expiration_year: '2030' }), 'data.expiration_year'],
      ['a two-digit cvc', card({ cvc: '12' }), 'data.cvc'],
      ['a five-digit cvc', card({ cvc: '12345' }), 'data.cvc'],
      ['a two-digit numeric cvc', card({ cvc: 12 }), 'data.cvc'],
      ['a cvc with letters', card({ cvc: '12a' }), 'data.cvc'],
      ['an unknown card field', card({ holder: 'Ada' }), 'data.holder'],
      ['card data that is a string', '4242424242424242', 'data'],
      ['card data that is an array', ['4242424242424242'], 'data'],
      ['card data that is null', null, 'data']
    ])('rejects a card with %s', async (_label, data, field) => {
      const response = await post({ type: 'card', data })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
      expect(JSON.stringify(response.body)).not.toMatch(/\d{12}/)
    })

    it('shows a bank account masked for a masking caller, with the bank defaults', async () => {
      const response = await post({ type: 'bank', data: { routing_number: ROUTING, account_number: '000123456789' } }, masker.key)
      expect(response.status).toBe(201)
      expect(response.body).toMatchObject({
        type: 'bank',
        data: { routing_number: ROUTING, account_number: 'XXXXXXXX6789' },
        containers: ['/bank/high/'],
        fingerprint_expression: '{{ data.account_number }}|{{ data.routing_number }}'
      })
      expect(JSON.stringify(response.body)).not.toContain('000123456789')
    })

    it.each(['1', '12345678901234567'])('accepts a bank account number of %s', async (account) => {
      await create({ type: 'bank', data: { routing_number: '011000015', account_number: account } })
    })

    it.each([
      ['a routing number failing the ABA checksum', { routing_number: '021000022', account_number: '123' }, 'data.routing_number'],
      ['an 8-digit routing number', { routing_number: '02100002', account_number: '123' }, 'data.routing_number'],
      ['a routing number with letters', { routing_number: '02100002a', account_number: '123' }, 'data.routing_number'],
      ['a numeric routing number', { routing_number: 21000021, account_number: '123' }, 'data.routing_number'],
      ['a missing routing number', { account_number: '123' }, 'data.routing_number'],
      ['an 18-digit account number', { routing_number: ROUTING, account_number: '123456789012345678' }, 'data.account_number'],
      ['an empty account number', { routing_number: ROUTING, account_number: '' }, 'data.account_number'],
      ['an account number with letters', { routing_number: ROUTING, account_number: '12a' }, 'data.account_number'],
      ['a numeric account number', { routing_number: ROUTING, account_number: 123 }, 'data.account_number'],
      ['a missing account number', { routing_number: ROUTING }, 'data.account_number'],
      ['an unknown bank field', { routing_number: ROUTING, account_number: '1', iban: 'x' }, 'data.iban'],
      ['bank data that is a string', '021000021', 'data']
    ])('rejects a bank account with %s', async (_label, data, field) => {
      const response = await post({ type: 'bank', data })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('uses a literal id', async () => {
      const id = `customer-${randomUUID()}`
      const token = await create({ id, type: 'token', data: 'x' })
      expect(token.id).toBe(id)
      expect((await get(id)).body.id).toBe(id)
    })

    it.each([...'#/\\+?[]|&=%<>{}^'])('rejects an id containing %s', async (char) => {
      const response = await post({ id: `abc${char}def`, type: 'token', data: 'x' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['id'])
    })

    it('accepts ids of 3 and 400 characters and refuses 2 and 401', async () => {
      const base = randomUUID().replace(/-/g, '')
      expect((await post({ id: base.slice(0, 3), type: 'token', data: 'x' })).status).toBe(201)
      expect((await post({ id: base.padEnd(400, 'z'), type: 'token', data: 'x' })).status).toBe(201)
      expect((await post({ id: base.slice(0, 2), type: 'token', data: 'x' })).status).toBe(400)
      expect((await post({ id: base.padEnd(401, 'z'), type: 'token', data: 'x' })).status).toBe(400)
    })

    it('answers a duplicate id with 409 and keeps the first token', async () => {
      const id = `dup-${randomUUID()}`
      await create({ id, type: 'token', data: 'first' })
      const response = await post({ id, type: 'token', data: 'second' })
      expect(response.status).toBe(409)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(JSON.stringify(response.body)).not.toContain('second')
      expect((await get(id)).body.data).toBe('first')
    })

    it('lets exactly one of two concurrent creates with the same id win, and the neighbours of the loser succeed', async () => {
      const id = `race-${randomUUID()}`
      const responses = await Promise.all([
        post({ id, type: 'token', data: 'one' }),
        post({ type: 'token', data: 'neighbour' }),
        post({ id, type: 'token', data: 'two' }),
        post({ type: 'card', data: card() })
      ])
      expect(responses.map((response) => response.status).sort()).toEqual([201, 201, 201, 409])
      expect([responses[0].status, responses[2].status].sort()).toEqual([201, 409])
      const winner = responses[0].status === 201 ? 'one' : 'two'
      expect((await logsOf(id)).map((entry) => entry.operation)).toEqual(['create'])
      expect((await get(id)).body.data).toBe(winner)
    })

    it('deduplicates concurrent creates of the same data into one token', async () => {
      const data = card()
      const responses = await Promise.all([1, 2, 3].map(() => post({ type: 'card', data, deduplicate_token: true })))
      expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 201])
      expect(new Set(responses.map((response) => response.body.id)).size).toBe(1)
    })

    it('stores the given containers', async () => {
      const token = await create({ type: 'token', data: 'x', containers: ['/a/', '/b/c_d-e/'] })
      expect(token.containers).toEqual(['/a/', '/b/c_d-e/'])
    })

    it.each([
      ['no leading slash', ['pci/high/'], 'containers[0]'],
      ['no trailing slash', ['/pci/high'], 'containers[0]'],
      ['a double slash', ['/pci//high/'], 'containers[0]'],
      ['a space', ['/p ci/'], 'containers[0]'],
      ['a non-string entry', [1], 'containers[0]'],
      ['an empty list', [], 'containers'],
      ['a string instead of a list', '/pci/', 'containers']
    ])('rejects containers with %s', async (_label, containers, field) => {
      const response = await post({ type: 'token', data: 'x', containers })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('stores string metadata', async () => {
      const metadata = { customer: 'c-1', 'with space.and.dots': 'ok' }
      expect((await create({ type: 'token', data: 'x', metadata })).metadata).toEqual(metadata)
    })

    it.each([
      ['a number value', { a: 1 }, 'metadata.a'],
      ['a null value', { a: null }, 'metadata.a'],
      ['an object value', { a: { b: 'c' } }, 'metadata.a'],
      ['a value of 501 characters', { a: 'v'.repeat(501) }, 'metadata.a'],
      ['a list instead of a map', ['a'], 'metadata'],
      ['a string instead of a map', 'a=b', 'metadata']
    ])('rejects metadata with %s', async (_label, metadata, field) => {
      const response = await post({ type: 'token', data: 'x', metadata })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('gives equal data of one type equal fingerprints, and different data different ones', async () => {
      const number = cardNumber()
      const a = await create({ type: 'card', data: { number } })
      const b = await create({ type: 'card', data: { number, expiration_month: 1, expiration_year: 2031 } })
      const c = await create({ type: 'card', data: { number: cardNumber() } })
      expect(a.id).not.toBe(b.id)
      expect(a.fingerprint).toBe(b.fingerprint)
      expect(c.fingerprint).not.toBe(a.fingerprint)
    })

    it('returns the existing token with 200 when deduplicate_token finds one', async () => {
      const data = card()
      const original = await create({ type: 'card', data })
      const response = await post({ type: 'card', data, deduplicate_token: true })
      expect(response.status).toBe(200)
      expect(response.body).toEqual(original)
    })

    it('creates a new token when deduplicate_token finds none, or is not asked for', async () => {
      const data = card()
      const first = await create({ type: 'card', data, deduplicate_token: true })
      const second = await create({ type: 'card', data })
      expect(second.id).not.toBe(first.id)
    })

    it('gives a deduplicating caller who cannot read the original only id, type, tenant_id, fingerprint and containers', async () => {
      const data = card()
      const original = await create({ type: 'card', data })
      const response = await post({ type: 'card', data, deduplicate_token: true }, creator.key)
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        id: original.id,
        type: 'card',
        tenant_id: service.tenantId,
        fingerprint: original.fingerprint,
        containers: ['/pci/high/']
      })
    })

    it('does not deduplicate against a token of another type', async () => {
      const number = cardNumber()
      const original = await create({ type: 'token', data: { number }, fingerprint_expression: '{{ data.number }}' })
      const response = await post({ type: 'card', data: { number }, deduplicate_token: true })
      expect(response.status).toBe(201)
      expect(response.body.id).not.toBe(original.id)
    })

    it.each([
      ['M/D/YYYY h:mm:ss AM ±hh:mm', '1/2/2030 3:04:05 PM +02:00', '2030-01-02T13:04:05.000Z'],
      ['M/D/YYYY h:mm:ss AM without an offset (UTC)', '12/31/2029 12:00:00 AM', '2029-12-31T00:00:00.000Z'],
      ['M/D/YYYY (12 AM UTC)', '1/2/2030', '2030-01-02T00:00:00.000Z'],
      ['ISO 8601', '2030-01-02T03:04:05-05:00', '2030-01-02T08:04:05.000Z'],
      ['the last time a date-time can state', '12/31/9999 11:59:59 PM', '9999-12-31T23:59:59.000Z']
    ])('accepts expires_at as %s and returns it in ISO 8601', async (_label, expires_at, iso) => {
      const token = await create({ type: 'token', data: 'x', expires_at })
      expect(token.expires_at).toBe(iso)
      expect((await get(token.id)).body.expires_at).toBe(iso)
    })

    it.each([
      ['in the past', '1/2/2020'],
      ['equal to now', '2026-11-25T12:00:00Z'],
      ['not a date', 'tomorrow'],
      ['with month 13', '13/1/2030'],
      ['with hour 13 PM', '1/2/2030 13:00:00 PM'],
      ['a number', 1893456000000],
      ['past the year 9999 in UTC', '12/31/9999 11:59:59 PM -14:00'],
      ['past the year 9999 in UTC, as ISO 8601', '9999-12-31T23:59:59-01:00']
    ])('rejects expires_at %s', async (_label, expires_at) => {
      const response = await post({ type: 'token', data: 'x', expires_at })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['expires_at'])
    })

    it('checks token:create on the destination containers', async () => {
      expect((await post({ type: 'card', data: card() }, pciOnly.key)).status).toBe(201)
      expect((await post({ type: 'token', data: 'x' }, pciOnly.key)).status).toBe(403)
      expect((await post({ type: 'card', data: card(), containers: ['/general/'] }, pciOnly.key)).status).toBe(403)
      expect((await post({ type: 'card', data: card(), containers: ['/pci/', '/general/'] }, pciOnly.key)).status).toBe(201)
    })

    it('masks the response of a rule-scoped creator by its create rule, not its read rule', async () => {
      const number = cardNumber()
      const response = await post({ type: 'card', data: { number } }, pciOnly.key)
      expect(response.body.data).toEqual({ number: masked(number) })
    })

    it('rejects a caller without token:create with 403 and creates nothing', async () => {
      const reader = await service.createApplication({ name: 'Reader', type: 'private', permissions: ['token:read'] })
      const id = `forbidden-${randomUUID()}`
      const response = await post({ id, type: 'token', data: 'x' }, reader.key)
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect((await get(id)).status).toBe(404)
    })

    it('rejects a management key with 403', async () => {
      expect((await post({ type: 'token', data: 'x' }, service.adminKey)).status).toBe(403)
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('POST', '/tokens', { key: null, body: { type: 'token', data: 'x' } })).status).toBe(401)
    })

    it.each([
      ['a missing type', { data: 'x' }, 'type'],
      ['a numeric type', { type: 5, data: 'x' }, 'type'],
      ['an unknown type', { type: 'ssn', data: 'x' }, 'type'],
      ['a missing data', { type: 'token' }, 'data'],
      ['an unknown field', { type: 'token', data: 'x', colour: 'blue' }, 'colour'],
      ['an unknown field named toString', { type: 'token', data: 'x', toString: 0 }, 'toString'],
      ['an unknown field named constructor', { type: 'token', data: 'x', constructor: 'x' }, 'constructor'],
      ['a numeric id', { id: 12345, type: 'token', data: 'x' }, 'id'],
      ['an empty id', { id: '', type: 'token', data: 'x' }, 'id'],
      ['an id of 2001 characters', { id: 'i'.repeat(2001), type: 'token', data: 'x' }, 'id'],
      ['a fingerprint_expression that is not a string', { type: 'token', data: 'x', fingerprint_expression: 5 }, 'fingerprint_expression'],
      ['a fingerprint_expression of 2001 characters', { type: 'token', data: 'x', fingerprint_expression: 'f'.repeat(2001) }, 'fingerprint_expression'],
      ['a deduplicate_token that is not a boolean', { type: 'token', data: 'x', deduplicate_token: 'yes' }, 'deduplicate_token'],
      ['21 containers', { type: 'token', data: 'x', containers: Array(21).fill('/a/') }, 'containers'],
      ['a container of 401 characters', { type: 'token', data: 'x', containers: [`/${'c'.repeat(399)}/`] }, 'containers[0]'],
      ['a search index of 2001 characters', { type: 'token', data: 'x', search_indexes: ['s'.repeat(2001)] }, 'search_indexes[0]'],
      ['a metadata key of 101 characters', { type: 'token', data: 'x', metadata: { ['k'.repeat(101)]: 'v' } }, `metadata.${'k'.repeat(101)}`],
      ['51 metadata keys', { type: 'token', data: 'x', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      ['an expires_at that is not a string', { type: 'token', data: 'x', expires_at: { date: '1/1/2030' } }, 'expires_at'],
      ['21 search indexes', { type: 'token', data: 'x', search_indexes: Array(21).fill('{{ data }}') }, 'search_indexes'],
      ['a body that is an array', [{ type: 'token', data: 'x' }], '(body)'],
      ['a body that is a string', 'x', '(body)'],
      ['a body that is null', null, '(body)']
    ])('rejects %s with 400', async (_label, body, field) => {
      const response = await post(body)
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(response.body.errors)).toContain(field)
    })

    it('reports every bad field at once', async () => {
      const response = await post({ type: 'card', data: { number: '1' }, containers: ['x'], metadata: { a: 1 }, colour: 1 })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors).sort()).toEqual(['colour', 'containers[0]', 'metadata.a'])
      const typed = await post({ id: 'x', type: 'card', data: { number: '1', cvc: 1 }, mask: '{{ nope | nope }}', expires_at: 'soon' })
      expect(Object.keys(typed.body.errors).sort()).toEqual(['data.cvc', 'data.number', 'expires_at', 'id', 'mask'])
    })

    it('rejects malformed JSON with 400', async () => {
      const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: '{"type": "token", "data": ' })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(response.body.errors).toHaveProperty('(body)')
    })

    it('rejects an empty body with 400', async () => {
      expect((await service.request('POST', '/tokens', { key: revealer.key })).status).toBe(400)
    })

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json'])('rejects a %s body with 415', async (contentType) => {
      const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: '{"type":"token","data":"x"}', contentType })
      expect(response.status).toBe(415)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
    })

    it('accepts application/json with a charset', async () => {
      const response = await service.request('POST', '/tokens', { key: revealer.key, rawBody: '{"type":"token","data":"x"}', contentType: 'application/json; charset=utf-8' })
      expect(response.status).toBe(201)
    })

    it('writes one create log entry naming the application', async () => {
      const token = await create({ type: 'card', data: card() }, masker.key)
      expect(await logsOf(token.id)).toEqual([
        expect.objectContaining({ actor_id: masker.id, actor_type: 'application', entity_type: 'card', entity_id: token.id, operation: 'create' })
      ])
    })

    it('writes nothing for a rejected create', async () => {
      const id = `rejected-${randomUUID()}`
      expect((await post({ id, type: 'card', data: { number: '1' } })).status).toBe(400)
      expect(await logsOf(id)).toEqual([])
    })
  })

  describe('POST /tokens body limit', () => {
    let small: TestService
    beforeAll(async () => {
      small = await startTestService({ bodyLimitBytes: 1024 })
    })
    afterAll(() => small.stop())

    it('rejects a body over the limit with 413 and accepts one under it', async () => {
      const { key } = await small.createApplication({ name: 'App', type: 'private', permissions: ['token:create'] })
      const over = await small.request('POST', '/tokens', { key, body: { type: 'token', data: 'x'.repeat(2000) } })
      expect(over.status).toBe(413)
      expect(over.headers.get('content-type')).toContain('application/problem+json')
      const under = await small.request('POST', '/tokens', { key, body: { type: 'token', data: 'x'.repeat(900) } })
      expect(under.status).toBe(201)
      expect((await small.request('GET', '/health', { key: null })).status).toBe(200)
    })
  })
})
