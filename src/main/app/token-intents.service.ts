/**
 * Token intents (Basis Theory's `/token-intents`): card or bank data checked,
 * fingerprinted and sealed like a token's, shown only masked, deleted after a
 * day unless `POST /tokens` with `token_intent_id` converts it into a token
 * first (consuming it in the transaction that creates the token).
 * Basis Theory's `token-intent:*` permissions map onto Tessera's token
 * permissions on the type's default containers (docs/basis-theory.md).
 */
import type { ConvertTokenIntentInput, CreateTokenInput, CreateTokenIntentInput } from '../../shared/contracts'
import type { Permission } from '../../shared/types'
import type { z } from 'zod'
import type { tokenIntent } from '../../shared/contracts'
import { openJson, sealJson } from '../crypto/aead'
import { newId } from '../crypto/random'
import { requireTokenAccess } from '../domain/access'
import type { Actor } from '../domain/actor'
import { retainShortLived } from '../domain/cvc-retention'
import { toIsoString } from '../domain/dates'
import { NotFoundError, ValidationError } from '../domain/errors'
import { ExpressionBudget } from '../domain/expressions'
import { isUuid, uuidPathId } from '../domain/ids'
import type { TokenKeys } from '../domain/token'
import { tokenIntentDetails, tokenIntentExpiry } from '../domain/token-intent'
import { admitExpressions, prepareToken } from '../domain/token-request'
import { getTokenType } from '../domain/token-types'
import {
  deleteExpiredTokenIntent,
  deleteTokenIntent,
  findTokenIntent,
  insertTokenIntent,
  listExpiredTokenIntents,
  type TokenIntentRecord
} from '../storage/repositories/token-intents.repository'
import { audit } from './audit'
import type { ServiceContext } from './service-context'
import { tokenIntentAssociatedData, tokenKeys } from './token-crypto'
import type { CreateResult, TokensService } from './tokens.service'

export type TokenIntent = z.infer<typeof tokenIntent>

const ENTITY_TYPE = 'token-intent'

/** Unknown, expired and already converted intents read alike: the id names nothing to convert. */
const nothingToConvert = () => ValidationError.field('token_intent_id', 'names no token intent: it is unknown, has expired or was already converted')

function toWire(intent: TokenIntentRecord): TokenIntent {
  return {
    id: intent.id,
    type: intent.type as TokenIntent['type'],
    tenant_id: intent.tenant_id,
    fingerprint: intent.fingerprint,
    [intent.type]: intent.details,
    ...(intent.created_by !== null ? { created_by: intent.created_by } : {}),
    created_at: toIsoString(intent.created_at),
    expires_at: toIsoString(intent.expires_at)
  }
}

export class TokenIntentsService {
  private readonly keys: TokenKeys

  constructor(
    private readonly context: ServiceContext,
    private readonly tokens: Pick<TokensService, 'insertPrepared'>
  ) {
    this.keys = tokenKeys(context.keyring)
  }

  /** `POST /token-intents`: needs `token:create` on the type's default containers. */
  async create(actor: Actor, input: CreateTokenIntentInput): Promise<TokenIntent> {
    const now = this.context.clock.now()
    const type = getTokenType(input.type)!
    const data = type.parseData(input.data, 'data')
    const id = newId()
    this.requireAccess(actor, 'token:create', input.type, id)
    const tenantId = actor.tenantId
    // A CVC is kept no longer than its retention window: the intent goes with it.
    const stored = retainShortLived(type, data, now, this.context.cvcRetentionMs)
    const { version, key } = this.context.keyring.currentDataKey(tenantId)
    const intent: TokenIntentRecord = {
      tenant_id: tenantId,
      id,
      type: type.name,
      key_version: version,
      sealed_data: Buffer.from(sealJson(key, stored.data, tokenIntentAssociatedData(tenantId, id))),
      fingerprint: this.keys.fingerprint(tenantId, type.name, type.defaultFingerprintSource(data)),
      details: tokenIntentDetails(type.name, data),
      created_by: actor.id,
      created_at: now,
      expires_at: tokenIntentExpiry(now, stored.expiresAt)
    }
    await this.context.writes.run(async (trx) => {
      await insertTokenIntent(trx, intent)
      audit(trx, now, [{ actor, entityType: ENTITY_TYPE, entityId: id, operation: 'create', message: `Token intent created (${type.name})` }])
    })
    return toWire(intent)
  }

  /** `GET /token-intents/{id}`: needs `token:read` on the type's default containers; 404 once expired or converted. */
  async get(actor: Actor, id: string): Promise<TokenIntent> {
    const now = this.context.clock.now()
    const intent = await this.findOr404(actor, id, now)
    this.requireAccess(actor, 'token:read', intent.type, intent.id)
    await audit(this.context.writes, now, [{ actor, entityType: ENTITY_TYPE, entityId: intent.id, operation: 'read', message: 'Token intent retrieved' }])
    return toWire(intent)
  }

  /** `DELETE /token-intents/{id}`: needs `token:delete` on the type's default containers. */
  async delete(actor: Actor, id: string): Promise<void> {
    const now = this.context.clock.now()
    const intent = await this.findOr404(actor, id, now)
    this.requireAccess(actor, 'token:delete', intent.type, intent.id)
    await this.context.writes.run(async (trx) => {
      if (!(await deleteTokenIntent(trx, actor.tenantId, intent.id, now))) throw new NotFoundError('Token intent')
      audit(trx, now, [{ actor, entityType: ENTITY_TYPE, entityId: intent.id, operation: 'delete', message: 'Token intent deleted' }])
    })
  }

  /**
   * `POST /tokens` with `token_intent_id`: a token of the intent's type and data, with the
   * request's other fields, checked like any create (`token:create` on its containers).
   * The intent is deleted in the transaction that inserts the token, so it converts once.
   */
  async convert(actor: Actor, input: ConvertTokenIntentInput): Promise<CreateResult> {
    const now = this.context.clock.now()
    const { token_intent_id: intentId, ...request } = input
    const intent = isUuid(intentId) ? await findTokenIntent(this.context.reader, actor.tenantId, intentId.toLowerCase(), now) : undefined
    if (!intent) throw nothingToConvert()
    if (request.type !== undefined && request.type !== intent.type) throw ValidationError.field('type', `must be the token intent's type (${intent.type}) or left out`)
    const budget = new ExpressionBudget()
    const tokenRequest = { ...request, type: intent.type, data: this.open(intent) } as CreateTokenInput
    admitExpressions(budget, tokenRequest)
    // The CVC keeps the deadline it got when the intent was made (the intent's own, when it holds one).
    const cvcRetentionMs = this.context.cvcRetentionMs === 0 ? 0 : intent.expires_at - now
    const prepared = await prepareToken({ actor, keys: this.keys, now, budget, cvcRetentionMs }, tokenRequest)
    return this.context.writes.run(async (trx) => {
      if (!(await deleteTokenIntent(trx, actor.tenantId, intent.id, now))) throw nothingToConvert()
      const result = await this.tokens.insertPrepared(trx, actor, prepared, now)
      audit(trx, now, [{ actor, entityType: ENTITY_TYPE, entityId: intent.id, operation: 'delete', message: `Token intent converted into token ${result.token.id}` }])
      return result
    })
  }

  /** Deletes up to `limit` intents past their lifetime; returns how many. The `expire-token-intents` sweep. */
  async expireDue(now: number, limit: number): Promise<number> {
    const due = await listExpiredTokenIntents(this.context.reader, now, limit)
    if (due.length === 0) return 0
    return this.context.writes.run(async (trx) => {
      let deleted = 0
      for (const intent of due) {
        if (!(await deleteExpiredTokenIntent(trx, intent.tenant_id, intent.id, now))) continue
        audit(trx, now, [{ actor: null, tenantId: intent.tenant_id, entityType: ENTITY_TYPE, entityId: intent.id, operation: 'expire', message: 'Token intent expired and deleted' }])
        deleted++
      }
      return deleted
    })
  }

  private async findOr404(actor: Actor, id: string, now: number): Promise<TokenIntentRecord> {
    const intent = await findTokenIntent(this.context.reader, actor.tenantId, uuidPathId(id, 'Token intent'), now)
    if (!intent) throw new NotFoundError('Token intent')
    return intent
  }

  /** Basis Theory's `token-intent:create|read|delete`, as the token permission on the containers a token of the type goes to by default. */
  private requireAccess(actor: Actor, permission: Permission, type: string, id: string): void {
    requireTokenAccess(actor, permission, { id, containers: getTokenType(type)!.defaultContainers })
  }

  private open(intent: TokenIntentRecord): unknown {
    const key = this.context.keyring.dataKey(intent.tenant_id, intent.key_version)
    return openJson(key, intent.sealed_data, tokenIntentAssociatedData(intent.tenant_id, intent.id))
  }
}
