import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../src/main/crypto/keys'
import { silentLogger } from '../../src/main/infra/logger'
import { initVault, openVault } from '../../src/main/bootstrap/vault'
import { VaultAlreadyInitialisedError } from '../../src/main/domain/errors'
import { acquireVaultLock, readLockOwner, VaultInUseError } from '../../src/main/infra/vault-lock'

describe('vault', () => {
  let dataDir: string
  const masterKey = generateMasterKey()

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tessera-vault-'))
    await initVault({ dataDir, masterKey, tenantName: 'Acme' })
  })
  afterAll(() => rm(dataDir, { recursive: true, force: true }))

  it('refuses to initialise a directory that already holds a vault', async () => {
    await expect(initVault({ dataDir, masterKey, tenantName: 'Again' })).rejects.toBeInstanceOf(VaultAlreadyInitialisedError)
  })

  it('refuses to open a vault with the wrong master key', async () => {
    await expect(openVault({ dataDir, masterKey: generateMasterKey(), logger: silentLogger() })).rejects.toThrow(/Cannot unlock vault/)
  })

  it('lets only one owner open a vault at a time, records who it is, and frees it on close', async () => {
    const first = await openVault({ dataDir, masterKey, logger: silentLogger(), kind: 'desktop' })
    expect(await readLockOwner(dataDir)).toEqual({ pid: process.pid, kind: 'desktop', started_at: expect.any(String), process_start: expect.any(String) })
    await first.recordUrl('http://127.0.0.1:4390')
    const refusal = await openVault({ dataDir, masterKey, logger: silentLogger() }).catch((error) => error)
    expect(refusal).toBeInstanceOf(VaultInUseError)
    expect(refusal.message).toBe(`The vault in ${dataDir} is in use by the Tessera desktop app (process ${process.pid}, http://127.0.0.1:4390).`)
    await first.close()
    expect(await readLockOwner(dataDir)).toBeUndefined()
    const second = await openVault({ dataDir, masterKey, logger: silentLogger() })
    expect((await readLockOwner(dataDir))?.kind).toBe('serve')
    await second.close()
  })

  it('does not let init run while the vault is held', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'tessera-vault-'))
    try {
      const held = await acquireVaultLock(empty, 'serve')
      await expect(initVault({ dataDir: empty, masterKey, tenantName: 'Racing' })).rejects.toBeInstanceOf(VaultInUseError)
      await held.release()
      await initVault({ dataDir: empty, masterKey, tenantName: 'After' })
      expect(await readLockOwner(empty)).toBeUndefined()
    } finally {
      await rm(empty, { recursive: true, force: true })
    }
  })
})
