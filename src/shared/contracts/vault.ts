/** The desktop app's first run (IPC only). */
import { z } from 'zod'
import { emailSchema, tenantNameSchema } from './fields'

/** Creates the vault: its tenant, owner and where the master key is kept. */
export const createVaultRequest = z.strictObject({
  tenantName: tenantNameSchema,
  ownerEmail: emailSchema.optional(),
  keyStorage: z.enum(['keychain', 'key-file'])
})
