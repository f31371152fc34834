/** Tenant members and their users. */
import { z } from 'zod'
import { pageOf, pageQuery, queryList, timestamp, uuidFilter } from './common'

/** Members page size: default 20, maximum 50. */
export const MEMBERS_MAX_PAGE_SIZE = 50

/** `GET /tenants/self/members`. */
export const listMembersQuery = z.strictObject({
  user_id: queryList(uuidFilter).meta({ description: 'Only these users (repeatable)' }),
  ...pageQuery(MEMBERS_MAX_PAGE_SIZE)
})

export type ListMembersQuery = z.infer<typeof listMembersQuery>

export const user = z
  .strictObject({
    id: z.uuid(),
    email: z.string().optional(),
    first_name: z.string().optional(),
    last_name: z.string().optional(),
    picture: z.string().optional()
  })
  .meta({ id: 'User' })

export const member = z
  .strictObject({
    id: z.uuid(),
    tenant_id: z.uuid(),
    role: z.enum(['OWNER', 'ADMIN']).meta({ description: 'Both have full access; the OWNER cannot be deleted' }),
    user,
    created_by: z.uuid().optional(),
    created_at: timestamp.optional(),
    modified_by: z.uuid().optional(),
    modified_at: timestamp.optional()
  })
  .meta({ id: 'Member' })

export const memberPage = pageOf(member, 'MemberPage')
