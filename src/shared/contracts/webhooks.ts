/** Webhooks (Basis Theory's `/webhooks`): where the vault POSTs signed events about its entities. */
import { z } from 'zod'
import { emailSchema, nameText, withoutNul } from './fields'
import { pageOf, pageQuery, timestamp } from './common'

/** Every event a webhook may subscribe to (`GET /webhooks/event-types`). */
export const WEBHOOK_EVENT_TYPES = [
  'token.created',
  'token.updated',
  'token.deleted',
  'application.created',
  'application.updated',
  'application.deleted',
  'application.key.created',
  'application.key.deleted',
  'application.key.regenerated',
  'session.created',
  'session.authorized',
  'session.revoked',
  'tenant.member.deleted',
  'tenant.invitation.created',
  'tenant.invitation.resent',
  'tenant.invitation.deleted',
  'tenant.invitation.accepted'
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** At most this many webhooks per tenant, as Basis Theory allows. */
export const MAX_WEBHOOKS_PER_TENANT = 5

const eventType = z.enum(WEBHOOK_EVENT_TYPES, { error: 'is not an event type (see GET /webhooks/event-types)' })

/** Any http(s) URL, as Basis Theory accepts; where deliveries may go is decided when they are sent (the allow-list). */
export const webhookUrl = withoutNul(z.string().trim().min(1, 'must not be empty').max(2000, 'must be at most 2000 characters')).refine((value) => {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === ''
  } catch {
    return false
  }
}, 'must be an http or https URL without user name or password')

/** `POST /webhooks` and `PUT /webhooks/{id}` (which replaces every field). */
export const webhookBody = z
  .strictObject({
    name: nameText(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters')),
    url: webhookUrl,
    notify_email: emailSchema.optional().meta({ description: 'Kept and shown; Tessera sends no management notifications' }),
    events: z
      .array(eventType)
      .min(1, 'must name at least one event type')
      .max(WEBHOOK_EVENT_TYPES.length, `must name at most ${WEBHOOK_EVENT_TYPES.length} event types`)
      .transform((events) => [...new Set(events)])
  })
  .meta({ id: 'WebhookRequest' })

export type WebhookInput = z.infer<typeof webhookBody>

/** `GET /webhooks`. */
export const listWebhooksQuery = z.strictObject({ ...pageQuery(100) })
export type ListWebhooksQuery = z.infer<typeof listWebhooksQuery>

export const webhook = z
  .strictObject({
    id: z.uuid(),
    tenant_id: z.uuid(),
    status: z.enum(['enabled', 'disabled']),
    name: z.string(),
    url: z.string(),
    notify_email: z.string().optional(),
    events: z.array(z.string()),
    created_by: z.string(),
    created_at: timestamp,
    modified_by: z.string().optional(),
    modified_at: timestamp.optional()
  })
  .meta({ id: 'Webhook' })

export const webhookPage = pageOf(webhook, 'WebhookPage')

export const webhookEventTypes = z.array(z.string()).meta({ id: 'WebhookEventTypes' })

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'blocked'] as const

/** `GET /webhooks/{id}/deliveries` (a Tessera extension). */
export const listWebhookDeliveriesQuery = z.strictObject({
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional().meta({ description: 'Only deliveries in this state' }),
  ...pageQuery(100)
})
export type ListWebhookDeliveriesQuery = z.infer<typeof listWebhookDeliveriesQuery>

/** One POST of an event to a webhook's URL. */
export const webhookDeliveryAttempt = z
  .strictObject({
    at: timestamp,
    outcome: z.enum(['delivered', 'failed', 'blocked']).meta({ description: '`delivered`: a 2xx answer; `failed`: another answer, a time-out or a network error; `blocked`: the host is neither loopback nor on the allow-list (nothing was sent)' }),
    status_code: z.number().int().optional().meta({ description: 'The HTTP status of the answer' }),
    duration_ms: z.number().int().min(0),
    error: z.string().optional().meta({ description: 'An error code (`TIMEOUT`, `ECONNREFUSED`, `HOST_NOT_ALLOWED`, `REDIRECT_NOT_FOLLOWED`…), never a response body' })
  })
  .meta({ id: 'WebhookDeliveryAttempt' })

/** An event on its way to one webhook, with every attempt so far. */
export const webhookDelivery = z
  .strictObject({
    id: z.uuid(),
    webhook_id: z.uuid(),
    event_id: z.uuid(),
    event_type: z.string(),
    status: z.enum(DELIVERY_STATUSES).meta({ description: '`pending`: waiting for its next attempt; `delivered`; `failed`: gave up after the last attempt; `blocked`: the URL’s host is not allowed' }),
    attempts: z.array(webhookDeliveryAttempt),
    created_at: timestamp,
    next_attempt_at: timestamp.optional().meta({ description: 'While pending' }),
    completed_at: timestamp.optional()
  })
  .meta({ id: 'WebhookDelivery' })

export const webhookDeliveryPage = pageOf(webhookDelivery, 'WebhookDeliveryPage')
