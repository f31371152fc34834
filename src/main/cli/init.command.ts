/**
 * `tessera init`: creates the vault, its tenant, the OWNER user and a
 * management application, and prints that application's key once.
 */
import { initVault } from '../bootstrap/vault'
import type { CommandInput } from './commands'
import { prepareDataDir, removeCreatedDataDir } from './data-dir'
import { loadOrCreateMasterKey, placeOf } from './vault-access'

export async function init({ options }: CommandInput): Promise<void> {
  const place = placeOf(options)
  const dataDir = place.dataDir
  const created = await prepareDataDir(dataDir)
  const result = await initVault({
    ...place,
    masterKey: () => loadOrCreateMasterKey(dataDir),
    tenantName: options['tenant-name'] as string,
    ownerEmail: options['owner-email'] as string | undefined
  }).catch(async (error: unknown) => {
    // A refused init leaves no trace: not even the directory it made for the vault.
    if (created) await removeCreatedDataDir(dataDir, created)
    throw error
  })
  if (options.json) {
    process.stdout.write(JSON.stringify({ tenant_id: result.tenant_id, data_dir: dataDir, ...(place.databaseUrl ? { team_vault: true } : {}), application: result.application }) + '\n')
    return
  }
  process.stdout.write(
    [
      place.databaseUrl ? `Team vault created in its PostgreSQL database; its master key is in ${dataDir}` : `Vault created in ${dataDir}`,
      `Tenant: ${result.tenant_id}`,
      `Management application: ${result.application.id}`,
      `API key (shown once, store it now): ${result.application.key}`,
      ''
    ].join('\n')
  )
}
