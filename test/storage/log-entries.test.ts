/**
 * The audit log's stored forms: the entries of one write, whatever mix of actors
 * and trace ids they name, read back each with its own.
 */
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { appendLogEntries, listLogs, type LogRow } from '../../src/main/storage/repositories/logs.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { WriteQueue } from '../../src/main/storage/write-queue'
import { useTemporaryDatabase } from '../helpers/database'

describe('appendLogEntries', () => {
  const temporary = useTemporaryDatabase('log-entries')
  beforeAll(() => insertTenant(temporary.db.writer, { id: 't', name: 'Tenant', owner_user_id: null, created_at: 0 }))

  it('stores each entry of one write with its own actor and trace id, runs of the same ones included', async () => {
    const [a, b] = [randomUUID(), randomUUID()]
    const [traceA, traceB] = [randomUUID(), 'checkout-1']
    const named: [string | null, string | null | undefined][] = [
      [a, traceA],
      [a, traceA],
      [b, traceA],
      [b, traceB],
      [null, traceB],
      [null, null],
      [a, undefined],
      [a, traceA],
      [b, null]
    ]
    const rows: LogRow[] = named.map(([actor, trace], index) => ({
      tenant_id: 't',
      actor_id: actor,
      actor_type: actor === null ? null : 'application',
      entity_type: 'token',
      entity_id: `token-${index}`,
      operation: 'read',
      message: 'Token listed',
      created_at: 1000 + index,
      count: null,
      trace_id: trace
    }))
    await new WriteQueue(temporary.db.writer).append((buffer) => appendLogEntries(buffer, rows))

    const stored = (await listLogs(temporary.db.reader, { tenantId: 't' }, 100, 0)).reverse()
    expect(stored.map((row) => [row.entity_id, row.actor_id, row.trace_id ?? null])).toEqual(named.map(([actor, trace], index) => [`token-${index}`, actor, trace ?? null]))
  })
})
