/** Token intents (Basis Theory's `/token-intents`): card or bank data held for a day until a token is made of it. */
import { z } from 'zod'
import { timestamp } from './common'
import { createTokenBody, tokenData } from './tokens'

/** The types an intent may hold: those with details that can be shown masked. */
export const TOKEN_INTENT_TYPES = ['card', 'bank'] as const

/** `POST /token-intents`. */
export const createTokenIntentBody = z
  .strictObject({
    type: z.enum(TOKEN_INTENT_TYPES, { error: `must be one of: ${TOKEN_INTENT_TYPES.join(', ')}` }),
    data: tokenData.meta({ description: 'As for a token of the type: `card` `{number, expiration_month?, expiration_year?, cvc?}`, `bank` `{routing_number, account_number}`' })
  })
  .meta({ id: 'CreateTokenIntentRequest' })

export type CreateTokenIntentInput = z.infer<typeof createTokenIntentBody>

/** What may be shown of a card: the first six digits and the last four, and the expiry. */
export const cardDetails = z
  .strictObject({
    bin: z.string(),
    last4: z.string(),
    expiration_month: z.number().int().optional(),
    expiration_year: z.number().int().optional()
  })
  .meta({ id: 'CardDetails' })

/** What may be shown of a bank account: the routing number and the account number's last four digits. */
export const bankDetails = z.strictObject({ routing_number: z.string(), account_number_last4: z.string() }).meta({ id: 'BankDetails' })

/** The token intent object: never the data. */
export const tokenIntent = z
  .strictObject({
    id: z.uuid(),
    type: z.enum(TOKEN_INTENT_TYPES),
    tenant_id: z.uuid(),
    fingerprint: z.string().meta({ description: 'Equal to the fingerprint a token of this type and data gets by default' }),
    card: cardDetails.optional(),
    bank: bankDetails.optional(),
    created_by: z.uuid().optional(),
    created_at: timestamp,
    expires_at: timestamp.meta({ description: '24 hours after creation, or when the CVC retention window ends if the intent holds a CVC and that is sooner; the intent is deleted then' })
  })
  .meta({ id: 'TokenIntent' })

/**
 * `POST /tokens` with `token_intent_id`: the intent's type and data become the token's
 * (`type`, when given, must match), with the other token fields as in `createTokenBody`.
 */
export const convertTokenIntentBody = createTokenBody
  .omit({ type: true, data: true })
  .extend({
    token_intent_id: z.string().max(400).meta({ description: 'The token intent to convert; it is consumed' }),
    type: createTokenBody.shape.type.optional().meta({ description: 'The intent’s type, or left out' })
  })
  .meta({ id: 'CreateTokenFromIntentRequest' })

export type ConvertTokenIntentInput = z.infer<typeof convertTokenIntentBody>
