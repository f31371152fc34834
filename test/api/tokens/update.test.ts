/** Updating tokens: PATCH /tokens/{id} (RFC 7386 merge patch). */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { breakLuhn, cardNumber, MERGE_PATCH } from '../../helpers/tokens'
import { sql } from '../../../src/main/storage/connections'
import { FINGERPRINT, HOUR, ROUTING, rule, masked, service, masker, revealer, redactor, pciOnly, now, path, create, get, patch, logsOf, card, useTokensService, type Body } from './fixture'

useTokensService()

describe('tokens', () => {
  describe('PATCH /tokens/{id}', () => {
    it.each(['application/json', 'text/plain', 'application/json-patch+json'])('rejects a %s body with 415', async (contentType) => {
      const { id } = await create({ type: 'token', data: 'x' })
      const response = await service.request('PATCH', path(id), { key: revealer.key, body: { metadata: { a: 'b' } }, contentType })
      expect(response.status).toBe(415)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect((await get(id)).body.metadata).toEqual({})
    })

    it('merges a nested data change into a card and keeps the other fields', async () => {
      const data = card({ cvc: '123' })
      const { id } = await create({ type: 'card', data })
      const response = await patch(id, { data: { expiration_month: 1, expiration_year: 2031 } })
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual({ ...data, expiration_month: 1, expiration_year: 2031 })
      expect(response.body.mask).toEqual({ number: masked(data.number), expiration_month: 1, expiration_year: 2031 })
      expect((await get(id)).body.data).toEqual(response.body.data)
    })

    it('removes a data key patched to null', async () => {
      const data = card({ cvc: '123' })
      const { id } = await create({ type: 'card', data })
      const response = await patch(id, { data: { cvc: null } })
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual({ number: data.number, expiration_month: 12, expiration_year: 2030 })
    })

    it('merges nested objects and replaces arrays and scalars in generic data', async () => {
      const { id } = await create({ type: 'token', data: { a: { b: 1, c: 2 }, list: [1, 2], s: 'x' } })
      const response = await patch(id, { data: { a: { c: null, d: 4 }, list: [3] } })
      expect(response.body.data).toEqual({ a: { b: 1, d: 4 }, list: [3], s: 'x' })
      const replaced = await patch(id, { data: 'now a string' })
      expect(replaced.body.data).toBe('now a string')
    })

    it('patches data whose keys collide with Object.prototype names', async () => {
      const { id } = await create({ type: 'token', data: { hasOwnProperty: 1, constructor: 'c', toString: 't', keep: true } })
      const response = await patch(id, { data: { hasOwnProperty: null, constructor: 'd', prototype: 'p' } })
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual({ constructor: 'd', toString: 't', keep: true, prototype: 'p' })
    })

    it('refuses a data patch nested too deeply with 400', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)
      const response = await service.request('PATCH', path(id), { key: revealer.key, rawBody: `{"data":${deep}}`, contentType: MERGE_PATCH })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['data'])
    })

    it('refuses to remove data', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      const response = await patch(id, { data: null })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['data'])
    })

    it('stores a numeric cvc sent in a patch as a string', async () => {
      const { id } = await create({ type: 'card', data: card() })
      const response = await patch(id, { data: { cvc: 987 } })
      expect(response.status).toBe(200)
      expect(response.body.data.cvc).toBe('987')
    })

    it('re-validates card data after the patch and leaves the token unchanged on failure', async () => {
      const data = card()
      const { id } = await create({ type: 'card', data })
      for (const [change, field] of [
        [{ number: breakLuhn(data.number) }, 'data.number'],
        [{ number: null }, 'data.number'],
        [{ expiration_month: 13 }, 'data.expiration_month'],
        [{ expiration_year: 20 }, 'data.expiration_year'],
        [{ pin: '1234' }, 'data.pin']
      ] as const) {
        const response = await patch(id, { data: change })
        expect(response.status, JSON.stringify(change)).toBe(400)
        expect(Object.keys(response.body.errors)).toContain(field)
      }
      const after = await get(id)
      expect(after.body.data).toEqual(data)
      expect(after.body).not.toHaveProperty('modified_at')
    })

    it('re-validates bank data after the patch', async () => {
      const { id } = await create({ type: 'bank', data: { routing_number: ROUTING, account_number: '1' } })
      const response = await patch(id, { data: { routing_number: '021000022' } })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['data.routing_number'])
    })

    it('recomputes the fingerprint when the data changes', async () => {
      const { id, fingerprint } = await create({ type: 'card', data: card() })
      const other = await create({ type: 'card', data: card() })
      const response = await patch(id, { data: { number: (other.data as Body).number } })
      expect(response.body.fingerprint).not.toBe(fingerprint)
      expect(response.body.fingerprint).toBe(other.fingerprint)
    })

    it('sets modified_by and modified_at and keeps created_*', async () => {
      const token = await create({ type: 'token', data: 'x' }, masker.key)
      service.clock.advance(5000)
      const response = await patch(token.id, { metadata: { a: 'b' } })
      expect(response.body).toMatchObject({ created_by: masker.id, created_at: token.created_at, modified_by: revealer.id, modified_at: now() })
    })

    it('merges metadata: null removes a key, other keys are kept', async () => {
      const { id } = await create({ type: 'token', data: 'x', metadata: { a: '1', b: '2', c: '3' } })
      const response = await patch(id, { metadata: { a: null, b: 'two', d: '4' } })
      expect(response.status).toBe(200)
      expect(response.body.metadata).toEqual({ b: 'two', c: '3', d: '4' })
      expect((await get(id)).body.metadata).toEqual({ b: 'two', c: '3', d: '4' })
    })

    it('clears metadata patched to null', async () => {
      const { id } = await create({ type: 'token', data: 'x', metadata: { a: '1' } })
      const response = await patch(id, { metadata: null })
      expect(response.status).toBe(200)
      expect(response.body.metadata).toEqual({})
    })

    it('merges an object mask and removes a mask patched to null', async () => {
      const { id } = await create({ type: 'token', data: { a: 'aaaa', b: 'bbbb' }, mask: { a: '{{ data.a }}', b: '{{ data.b }}' } })
      const merged = await patch(id, { mask: { b: null, c: '{{ data.b | reveal_last: 1 }}' } })
      expect(merged.status).toBe(200)
      expect(merged.body.mask).toEqual({ a: '{{ data.a }}', c: '{{ data.b | reveal_last: 1 }}' })
      expect((await get(id, masker.key)).body.data).toEqual({ a: 'aaaa', c: 'XXXb' })
      const removed = await patch(id, { mask: null })
      expect(removed.body).not.toHaveProperty('mask')
      expect((await get(id, masker.key)).body).not.toHaveProperty('data')
    })

    it('replaces a card mask and shows its masked values', async () => {
      const number = cardNumber()
      const { id } = await create({ type: 'card', data: { number } })
      const response = await patch(id, { mask: { number: '{{ data.number | card_mask }}' } })
      expect(response.status).toBe(200)
      const view = { number: number.slice(0, 6) + 'XXXXXX' + number.slice(-4) }
      expect(response.body.mask).toEqual(view)
      expect((await get(id, masker.key)).body.data).toEqual(view)
    })

    it('rejects a patch after which the mask cannot be evaluated on the data, and changes nothing', async () => {
      const token = await create({ type: 'token', data: '12', mask: '{{ data | to_number }}' })
      const data = await patch(token.id, { data: 'twelve' })
      expect(data.status).toBe(400)
      expect(Object.keys(data.body.errors)).toEqual(['mask'])
      const other = await create({ type: 'token', data: 'twelve' })
      const mask = await patch(other.id, { mask: '{{ data | to_number }}' })
      expect(mask.status).toBe(400)
      expect((await get(token.id)).body).toEqual(token)
      expect((await get(other.id)).body).toEqual(other)
    })

    it('rejects an invalid mask', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      const response = await patch(id, { mask: '{{ data | nope }}' })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.errors)).toEqual(['mask'])
    })

    it('replaces containers, search_indexes and fingerprint_expression', async () => {
      const { id, fingerprint } = await create({ type: 'token', data: 'abcdef', containers: ['/a/', '/b/'], search_indexes: ['{{ data }}'] })
      const response = await patch(id, { containers: ['/c/'], search_indexes: ['{{ data | last4 }}'], fingerprint_expression: '{{ data | last4 }}' })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ containers: ['/c/'], search_indexes: ['{{ data | last4 }}'], fingerprint_expression: '{{ data | last4 }}' })
      expect(response.body.fingerprint).not.toBe(fingerprint)
      const same = await create({ type: 'token', data: 'zzcdef', fingerprint_expression: '{{ data | last4 }}' })
      expect(same.fingerprint).toBe(response.body.fingerprint)
    })

    it('recomputes the stored search indexes when the data changes', async () => {
      const { id } = await create({ type: 'token', data: 'before', search_indexes: ['{{ data }}'] })
      const hashes = () =>
        sql(service.host.vault.db.reader)('token_search_indexes').where({ token_id: id }).pluck('index_hash') as Promise<string[]>
      const before = await hashes()
      expect(before).toHaveLength(1)
      expect((await patch(id, { data: 'after' })).status).toBe(200)
      const after = await hashes()
      expect(after).toHaveLength(1)
      expect(after).not.toEqual(before)
      const fresh = await create({ type: 'token', data: 'after', search_indexes: ['{{ data }}'] })
      expect(await sql(service.host.vault.db.reader)('token_search_indexes').where({ token_id: fresh.id }).pluck('index_hash')).toEqual(after)
    })

    it('replaces expires_at, in any accepted format, and removes it when null', async () => {
      const { id } = await create({ type: 'token', data: 'x', expires_at: '1/1/2030' })
      const replaced = await patch(id, { expires_at: '2/3/2031 1:00:00 PM +01:00' })
      expect(replaced.body.expires_at).toBe('2031-02-03T12:00:00.000Z')
      const removed = await patch(id, { expires_at: null })
      expect(removed.status).toBe(200)
      expect(removed.body).not.toHaveProperty('expires_at')
    })

    it.each([
      ['containers with a bad path', { containers: ['nope'] }, 'containers[0]'],
      ['an empty containers list', { containers: [] }, 'containers'],
      ['search_indexes with a bad expression', { search_indexes: ['{{ data | nope }}'] }, 'search_indexes[0]'],
      ['a bad fingerprint_expression', { fingerprint_expression: '{{ data | nope }}' }, 'fingerprint_expression'],
      ['a fingerprint_expression that is not a string', { fingerprint_expression: 1 }, 'fingerprint_expression'],
      ['a past expires_at', { expires_at: '1/1/2020' }, 'expires_at'],
      ['an expires_at that is not a date', { expires_at: 'soon' }, 'expires_at'],
      ['metadata with a number value', { metadata: { a: 1 } }, 'metadata.a'],
      ['metadata that is a list', { metadata: ['a'] }, 'metadata'],
      ['a deduplicate_token that is not a boolean', { deduplicate_token: 1 }, 'deduplicate_token'],
      ['a new id', { id: 'another-id' }, 'id'],
      ['a new type', { type: 'card' }, 'type'],
      ['an unknown field', { colour: 'blue' }, 'colour'],
      ['an unknown field named toString', { toString: 0 }, 'toString'],
      ['an unknown field named hasOwnProperty', { hasOwnProperty: 0 }, 'hasOwnProperty'],
      ['a body that is an array', [{ data: 'y' }], '(body)'],
      ['a body that is a string', 'y', '(body)'],
      ['a body that is null', null, '(body)'],
      ['a body that is a number', 42, '(body)'],
      ['a body that is true', true, '(body)'],
      ['a body that is an empty string', '', '(body)']
    ])('rejects %s with 400 and changes nothing', async (_label, body, field) => {
      const token = await create({ type: 'token', data: 'x', metadata: { keep: 'me' } })
      const response = await patch(token.id, body)
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect(Object.keys(response.body.errors)).toContain(field)
      expect((await get(token.id)).body).toEqual(token)
    })

    it('rejects malformed JSON with 400 and an empty body with 400', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      expect((await service.request('PATCH', path(id), { key: revealer.key, rawBody: '{"data":', contentType: MERGE_PATCH })).status).toBe(400)
      expect((await service.request('PATCH', path(id), { key: revealer.key })).status).toBe(400)
    })

    it('accepts an empty patch and only touches modified_*', async () => {
      const token = await create({ type: 'token', data: 'x' })
      const response = await patch(token.id, {})
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ ...token, modified_by: revealer.id, modified_at: now() })
    })

    it('shapes the response by the caller update transform', async () => {
      const data = card()
      const { id } = await create({ type: 'card', data })
      const response = await patch(id, { metadata: { a: 'b' } }, masker.key)
      expect(response.body.data).toEqual({ number: masked(data.number), expiration_month: 12, expiration_year: 2030 })
      const redacted = await patch(id, { metadata: { a: 'c' } }, redactor.key)
      expect(redacted.status).toBe(200)
      expect(redacted.body).not.toHaveProperty('data')
    })

    it('redacts data, metadata, fingerprint_expression, search_indexes and mask when the update duplicates a token the caller cannot read', async () => {
      const updater = await service.createApplication({
        name: 'Updater',
        type: 'private',
        rules: [rule(1, '/general/', 'reveal', ['token:read', 'token:update', 'token:create'])]
      })
      const secret = `secret-${randomUUID()}`
      await create({ type: 'token', data: secret, containers: ['/hidden/'] })
      const own = await create({ type: 'token', data: 'mine', mask: '{{ data | reveal_last: 2 }}', metadata: { m: 'v' }, search_indexes: ['{{ data }}'] }, updater.key)
      const response = await patch(own.id, { data: secret }, updater.key)
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        id: own.id,
        tenant_id: service.tenantId,
        type: 'token',
        fingerprint: expect.stringMatching(FINGERPRINT),
        containers: ['/general/high/'],
        created_by: updater.id,
        created_at: own.created_at,
        modified_by: updater.id,
        modified_at: now()
      })
      // The update itself was applied.
      expect((await get(own.id)).body.data).toBe(secret)
    })

    it('does not redact the duplicate when the caller can read the original', async () => {
      const secret = `visible-${randomUUID()}`
      await create({ type: 'token', data: secret })
      const own = await create({ type: 'token', data: 'mine', metadata: { m: 'v' } })
      const response = await patch(own.id, { data: secret })
      expect(response.body).toMatchObject({ data: secret, metadata: { m: 'v' }, fingerprint_expression: '{{ data | stringify }}' })
    })

    it('rejects a caller without token:update with 403 and changes nothing', async () => {
      const token = await create({ type: 'card', data: card() })
      const response = await patch(token.id, { metadata: { a: 'b' } }, pciOnly.key)
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toContain('application/problem+json')
      expect((await get(token.id)).body).toEqual(token)
    })

    it('rejects moving a token into containers the caller may not update, with 403', async () => {
      const updater = await service.createApplication({ name: 'General updater', type: 'private', rules: [rule(1, '/general/', 'mask', ['token:update', 'token:create'])] })
      const { id } = await create({ type: 'token', data: 'x' }, updater.key)
      expect((await patch(id, { containers: ['/pci/'] }, updater.key)).status).toBe(403)
      expect((await get(id)).body.containers).toEqual(['/general/high/'])
    })

    it('answers an unknown id with 404', async () => {
      const response = await patch(`unknown-${randomUUID()}`, { metadata: { a: 'b' } })
      expect(response.status).toBe(404)
    })

    it('answers an expired token with 404', async () => {
      const { id } = await create({ type: 'token', data: 'x', expires_at: new Date(service.clock.now() + HOUR).toISOString() })
      service.clock.advance(HOUR)
      expect((await patch(id, { metadata: { a: 'b' } })).status).toBe(404)
    })

    it('writes one update log entry', async () => {
      const { id } = await create({ type: 'token', data: 'x' })
      await patch(id, { metadata: { a: 'b' } }, masker.key)
      const logs = await logsOf(id)
      expect(logs.map((entry) => entry.operation)).toEqual(['update', 'create'])
      expect(logs[0]).toMatchObject({ actor_id: masker.id, actor_type: 'application' })
    })

    it('writes no update log entry for a rejected patch', async () => {
      const { id } = await create({ type: 'card', data: card() })
      await patch(id, { data: { number: '1' } })
      expect((await logsOf(id)).map((entry) => entry.operation)).toEqual(['create'])
    })

    it('rejects a caller without an API key with 401', async () => {
      expect((await service.request('PATCH', '/tokens/abc', { key: null, body: {}, contentType: MERGE_PATCH })).status).toBe(401)
    })

    describe('metadata written by a caller who cannot reveal the token', () => {
      const DIGIT_RUN = 'must not contain 3 or more digits in a row: a caller who cannot reveal this token may not write digit runs into its metadata'
      /** Keys g<from>..g<from+49>, each holding its own three-digit number: one request tries 50 CVCs. */
      const cvcGuesses = (from: number) => Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`g${from + i}`, String(from + i)]))
      /** 29 sixteen-digit candidates in one 492-character value, differing in their last two digits. */
      const panGuesses = (number: string, includeRight: boolean) => {
        const guesses = Array.from({ length: 100 }, (_, i) => number.slice(0, 14) + String(i).padStart(2, '0')).filter((guess) => guess !== number).slice(0, 29)
        if (includeRight) guesses[13] = number
        return guesses.join('x')
      }

      it('gets the same answer whether or not a CVC guess is right', async () => {
        const browser = await service.createApplication({ name: 'Browser', type: 'public', permissions: ['token:update'] })
        const { id } = await create({ type: 'card', data: card({ cvc: '737' }) })
        const right = await patch(id, { metadata: cvcGuesses(700) }, browser.key)
        const wrong = await patch(id, { metadata: cvcGuesses(800) }, browser.key)
        expect(right.status).toBe(400)
        expect(right.body.errors).toEqual({ 'metadata.g700': [DIGIT_RUN] })
        expect(wrong.status).toBe(400)
        expect(wrong.body.errors).toEqual({ 'metadata.g800': [DIGIT_RUN] })
      })

      it('gets the same answer whether or not one of many card numbers in a value is right, masked view or public key', async () => {
        const browser = await service.createApplication({ name: 'Browser', type: 'public', permissions: ['token:update'] })
        const number = cardNumber(16)
        const { id } = await create({ type: 'card', data: card({ number }) })
        for (const key of [browser.key, masker.key]) {
          const right = await patch(id, { metadata: { a: panGuesses(number, true) } }, key)
          const wrong = await patch(id, { metadata: { a: panGuesses(number, false) } }, key)
          expect([right.status, right.body.errors]).toEqual([400, { 'metadata.a': [DIGIT_RUN] }])
          expect([wrong.status, wrong.body.errors]).toEqual([400, { 'metadata.a': [DIGIT_RUN] }])
        }
      })

      it('may write words, keeps digits someone who could see the data wrote, and is not compared with a generic token\'s data', async () => {
        const browser = await service.createApplication({ name: 'Browser', type: 'public', permissions: ['token:update'] })
        const { id } = await create({ type: 'bank', data: { routing_number: ROUTING, account_number: '000123456789' }, metadata: { order: '12345' } })
        const words = await patch(id, { metadata: { note: 'gift card, 2 uses' } }, browser.key)
        expect(words.status).toBe(200)
        expect(words.body.metadata).toEqual({ order: '12345', note: 'gift card, 2 uses' })
        const generic = await create({ type: 'token', data: 'Grace Hopper' })
        expect((await patch(generic.id, { metadata: { who: 'Grace Hopper' } }, browser.key)).status).toBe(200)
        expect((await patch(generic.id, { metadata: { who: 'Ada Lovelace' } }, browser.key)).status).toBe(200)
      })

      it('still tells a caller who may reveal the token that its metadata holds the data', async () => {
        const number = cardNumber(16)
        const { id } = await create({ type: 'card', data: card({ number, cvc: '737' }) })
        expect((await patch(id, { metadata: cvcGuesses(700) })).body.errors).toEqual({ 'metadata.g737': ['must not contain the token data'] })
        expect((await patch(id, { metadata: { a: panGuesses(number, true) } })).body.errors).toEqual({ 'metadata.a': ['must not contain the token data'] })
        expect((await patch(id, { metadata: { order: '12345' } })).status).toBe(200)
      })
    })
  })
})
