/**
 * The vault's webhook signing key pair, one per tenant, made on first use.
 * The private key is a sealed setting (sealed with the tenant's data key, so
 * key rotation re-encrypts it with everything else); the public key is derived
 * from it and published without authentication (`GET /webhooks/signing-key`).
 */
import { sealJson } from '../crypto/aead'
import { generateSigningKeyPair, publicKeyOf } from '../crypto/webhook-signing'
import { insertSealedSettingIfAbsent } from '../storage/repositories/sealed-settings.repository'
import { readSealedSetting, sealedSettingAssociatedData } from './sealed-settings.service'
import type { ServiceContext } from './service-context'

export const WEBHOOK_SIGNING_KEY_SETTING = 'webhooks.signing_key'

export class WebhookSigningKey {
  /** The public keys by tenant: they never change once made. */
  private readonly publicKeys = new Map<string, string>()

  constructor(private readonly context: ServiceContext) {}

  /** The PKCS#8 PEM private key, made and stored if the tenant has none. Read afresh each time: it is kept only sealed. */
  async privateKey(tenantId: string): Promise<string> {
    const { reader, keyring } = this.context
    const stored = await readSealedSetting(reader, keyring, tenantId, WEBHOOK_SIGNING_KEY_SETTING)
    if (stored !== undefined) return stored
    const { privateKeyPem } = generateSigningKeyPair()
    const { version, key } = keyring.currentDataKey(tenantId)
    const sealed = Buffer.from(sealJson(key, privateKeyPem, sealedSettingAssociatedData(tenantId, WEBHOOK_SIGNING_KEY_SETTING)))
    const row = { tenant_id: tenantId, name: WEBHOOK_SIGNING_KEY_SETTING, key_version: version, sealed_value: sealed, modified_at: this.context.clock.now() }
    const inserted = await this.context.writes.run((trx) => insertSealedSettingIfAbsent(trx, row))
    // Another instance made one at the same moment: theirs is the key.
    return inserted ? privateKeyPem : (await readSealedSetting(reader, keyring, tenantId, WEBHOOK_SIGNING_KEY_SETTING))!
  }

  /** The SPKI PEM public key. */
  async publicKey(tenantId: string): Promise<string> {
    const known = this.publicKeys.get(tenantId)
    if (known) return known
    const publicKey = publicKeyOf(await this.privateKey(tenantId))
    this.publicKeys.set(tenantId, publicKey)
    return publicKey
  }
}
