import { expect } from 'vitest'
import type { TenantMember } from '../../src/shared/types'
import type { TestService } from './service'

/** The acceptance link of the newest outbox mail for an invitation (read through the services, as `tessera outbox` does). */
export async function invitationLink(service: TestService, invitationId: string): Promise<string> {
  const outbox = (await service.host.vault.services.mail.listOutbox({ page: 1, size: 100 })).data
  const mail = outbox.find((entry) => entry.invitation_id === invitationId && entry.link)
  if (!mail?.link) throw new Error(`no outbox mail for invitation ${invitationId}`)
  return mail.link
}

/** The one-time secret inside an acceptance link. */
export function linkToken(link: string): string {
  return new URL(link).searchParams.get('token') ?? ''
}

/** Invites `email` and accepts the invitation: the new ADMIN member. */
export async function addMember(service: TestService, email: string, firstName = 'Ada', lastName = 'Lovelace'): Promise<TenantMember> {
  const invitation = await service.request('POST', '/tenants/self/invitations', { body: { email } })
  expect(invitation.status).toBe(201)
  const token = linkToken(await invitationLink(service, invitation.body.id))
  const accepted = await service.request('POST', '/invitations/accept', { key: null, body: { token, first_name: firstName, last_name: lastName } })
  expect(accepted.status).toBe(201)
  return accepted.body
}
