/** Tenant invitations and accepting one through its link. */
import { z } from 'zod'
import { pageOf, pageQuery, timestamp } from './common'
import { isEmailAddress, nameText } from './fields'

export const INVITATION_STATUSES = ['PENDING', 'EXPIRED'] as const

/** The shape of an invitee's address; the service also checks it is a single RFC 5322 addr-spec. */
export const emailAddress = z.string().max(254, 'must be at most 254 characters').meta({ format: 'email', examples: ['ada@example.com'] })

/** `POST /tenants/self/invitations`. */
export const createInvitationBody = z.strictObject({ email: emailAddress }).meta({ id: 'CreateInvitationRequest' })

/** The create body as the service takes it, the address also checked as a single RFC 5322 addr-spec. */
export const createInvitationCommand = createInvitationBody.superRefine((body, ctx) => {
  if (typeof body.email === 'string' && !isEmailAddress(body.email)) {
    ctx.addIssue({ code: 'custom', path: ['email'], message: 'must be a well-formed e-mail address (RFC 5322), such as ada@example.com' })
  }
})

export type CreateInvitationInput = z.infer<typeof createInvitationCommand>

/** `GET /tenants/self/invitations`. */
export const listInvitationsQuery = z.strictObject({
  status: z.enum(INVITATION_STATUSES, 'must be PENDING or EXPIRED').optional().meta({ description: 'Only invitations in this status' }),
  ...pageQuery(100)
})

export type ListInvitationsQuery = z.infer<typeof listInvitationsQuery>

/** The one-time secret of an invitation link (`?token=` of the link the mail carries). */
export const invitationLinkToken = z.string().min(1, 'is required').max(200, 'is not an invitation link token')

/** `GET /invitations/accept?token=…`: the acceptance page. */
export const invitationLinkQuery = z.object({ token: invitationLinkToken })

const personName = nameText(z.string().trim().min(1, 'is required').max(200, 'must be at most 200 characters'))

/** `POST /invitations/accept`: the link's token and the invitee's name. */
export const acceptInvitationBody = z
  .strictObject({ token: invitationLinkToken, first_name: personName, last_name: personName })
  .meta({ id: 'AcceptInvitationRequest' })

export type AcceptInvitationInput = z.infer<typeof acceptInvitationBody>

export const invitation = z
  .strictObject({
    id: z.uuid(),
    tenant_id: z.uuid(),
    email: z.string(),
    status: z.enum(INVITATION_STATUSES).meta({ description: '`EXPIRED` once `expires_at` has passed' }),
    expires_at: timestamp,
    created_by: z.uuid().optional(),
    created_at: timestamp.optional(),
    modified_by: z.uuid().optional(),
    modified_at: timestamp.optional()
  })
  .meta({ id: 'Invitation' })

export const invitationPage = pageOf(invitation, 'InvitationPage')
