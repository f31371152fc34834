/**
 * The change feed of a team vault: a change is heard by listeners only once
 * its transaction commits, never when it rolls back; a list of ids too long
 * for one notification becomes "every entry of the kind"; SQLite sends nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inTransaction } from '../../src/main/storage/connections'
import { listenForChanges, notifyChange, parseChange, type Change, type ChangeListener } from '../../src/main/storage/change-feed'
import { openDatabase } from '../../src/main/storage/database'
import { usePostgresDatabase } from '../helpers/database'

describe('the change feed', () => {
  const postgres = usePostgresDatabase()
  let listener: ChangeListener
  const heard: Change[] = []
  let connected: Promise<void>

  beforeAll(async () => {
    connected = new Promise((resolve) => {
      listener = listenForChanges(postgres.url, { onChange: (change) => heard.push(change), onConnected: resolve, onDisconnected: () => undefined })
    })
    await connected
  })
  afterAll(() => listener.close())

  /** Sends a marker change after `work`: once it is heard, whatever `work` sent would have been heard before it. */
  async function heardAfter(work: () => Promise<unknown>): Promise<Change[]> {
    heard.length = 0
    await work().catch(() => undefined)
    const marker = `marker-${Math.random()}`
    await inTransaction(postgres.db.writer, (tx) => notifyChange(tx, { kind: 'session', ids: [marker] }))
    while (!heard.some((change) => change.ids?.includes(marker))) await new Promise((resolve) => setTimeout(resolve, 10))
    return heard.filter((change) => !change.ids?.includes(marker))
  }

  it('delivers a change when its transaction commits', async () => {
    const changes = await heardAfter(() => inTransaction(postgres.db.writer, (tx) => notifyChange(tx, { kind: 'token', tenantId: 't1', ids: ['a', 'b'] })))
    expect(changes).toEqual([{ kind: 'token', tenantId: 't1', ids: ['a', 'b'] }])
  })

  it('drops a change whose transaction rolls back', async () => {
    const rolledBack = inTransaction(postgres.db.writer, async (tx) => {
      await notifyChange(tx, { kind: 'application', ids: ['gone'] })
      throw new Error('rolled back')
    })
    expect(await heardAfter(() => rolledBack)).toEqual([])
  })

  it('sends a list of ids too long for one notification as every entry of its kind', async () => {
    const ids = Array.from({ length: 400 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
    const changes = await heardAfter(() => inTransaction(postgres.db.writer, (tx) => notifyChange(tx, { kind: 'session', ids })))
    expect(changes).toEqual([{ kind: 'session', tenantId: undefined, ids: undefined }])
  })

  it('reads a payload it does not understand as a change of every kind', () => {
    expect(parseChange('not json').map((change) => change.kind)).toEqual(['application', 'session', 'token', 'keys', 'webhook'])
    expect(parseChange('{"kind":"application","ids":[1]}')).toEqual([{ kind: 'application', tenantId: undefined, ids: undefined }])
  })

  it('sends nothing on SQLite', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-feed-'))
    const file = await openDatabase(join(dir, 'tessera.db'), { readers: 1 })
    try {
      expect(await heardAfter(() => inTransaction(file.writer, (tx) => notifyChange(tx, { kind: 'keys' })))).toEqual([])
    } finally {
      await file.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
