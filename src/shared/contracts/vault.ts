/** The desktop app's first run (IPC only). */
import { z } from 'zod'
import { emailSchema, tenantNameSchema } from './fields'

/** Creates the vault: its tenant, owner and where the master key is kept. */
export const createVaultRequest = z.strictObject({
  tenantName: tenantNameSchema,
  ownerEmail: emailSchema.optional(),
  keyStorage: z.enum(['keychain', 'key-file'])
})

/**
 * The desktop's connection to a team vault: the server's URL, its management key and, for a server
 * whose certificate comes from a private CA, that CA's certificate (PEM; its size and content are
 * checked in the main process, which names `caCertificate`) (IPC only).
 */
export const connectTeamRequest = z.strictObject({
  url: z.string().trim().min(1, 'is required').max(2000, 'is too long'),
  key: z.string().trim().min(1, 'is required').max(500, 'is too long'),
  caCertificate: z.string().optional()
})
