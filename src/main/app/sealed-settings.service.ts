/**
 * Secrets of the settings, such as the desktop's SMTP password, kept in the
 * vault and sealed with the tenant's data key like token data, so key rotation
 * re-encrypts them with everything else and the settings file holds no secret.
 */
import type { Reader } from '../storage/connections'
import { openJson, sealJson } from '../crypto/aead'
import { deleteSealedSetting, findSealedSetting, upsertSealedSetting } from '../storage/repositories/sealed-settings.repository'
import type { ServiceContext } from './service-context'
import type { Keyring } from './keyring'

/** The desktop's SMTP password. */
export const SMTP_PASSWORD_SETTING = 'smtp.password'

/** Associated data binding a sealed setting to its tenant and name. */
export function sealedSettingAssociatedData(tenantId: string, name: string): string {
  return `setting:${tenantId}:${name}`
}

/** Reads one secret with a reader and the keys (usable before the services exist); undefined when unset. */
export async function readSealedSetting(db: Reader, keyring: Keyring, tenantId: string, name: string): Promise<string | undefined> {
  const row = await findSealedSetting(db, tenantId, name)
  if (!row) return undefined
  return openJson<string>(keyring.dataKey(tenantId, Number(row.key_version)), row.sealed_value, sealedSettingAssociatedData(tenantId, name))
}

export class SealedSettingsService {
  constructor(private readonly context: ServiceContext) {}

  get(tenantId: string, name: string): Promise<string | undefined> {
    return readSealedSetting(this.context.reader, this.context.keyring, tenantId, name)
  }

  /** Seals and stores `value` under the current data key; null removes it. */
  async put(tenantId: string, name: string, value: string | null): Promise<void> {
    const now = this.context.clock.now()
    await this.context.writes.run(async (trx) => {
      if (value === null) return deleteSealedSetting(trx, tenantId, name)
      const { version, key } = this.context.keyring.currentDataKey(tenantId)
      const sealed = Buffer.from(sealJson(key, value, sealedSettingAssociatedData(tenantId, name)))
      await upsertSealedSetting(trx, { tenant_id: tenantId, name, key_version: version, sealed_value: sealed, modified_at: now })
    })
  }
}
