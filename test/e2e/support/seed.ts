/** Puts realistic data in the harness's vault through the services, as the GUI's user. */
import type { DesktopHarness } from './desktop-harness'

export const CARD_NUMBERS = ['4242424242424242', '5555555555554444', '378282246310005', '6011111111111117']

export async function seedVault(harness: DesktopHarness): Promise<{ privateKey: string; publicId: string; privateId: string }> {
  const services = harness.desktop.requireVault().services
  const actor = harness.desktop.actor()
  for (const [index, number] of CARD_NUMBERS.entries()) {
    await services.tokens.create(actor, {
      type: 'card',
      data: { number, expiration_month: 1 + index, expiration_year: 2030 + index },
      metadata: { customer: `cus_${1000 + index}`, source: 'checkout' }
    })
  }
  await services.tokens.create(actor, { type: 'token', data: '123-45-6789', mask: '{{ data | reveal_last: 4 }}', metadata: { kind: 'ssn' } })
  await services.tokens.create(actor, { type: 'bank', data: { routing_number: '011000015', account_number: '123456789' } })
  const privateApp = await services.applications.create(actor, {
    name: 'Checkout backend',
    type: 'private',
    permissions: ['token:create', 'token:read'],
    rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:use'] }]
  })
  const publicApp = await services.applications.create(actor, { name: 'Payment form', type: 'public', permissions: ['token:create'] })
  await services.applications.create(actor, { name: 'Ops tooling', type: 'management', permissions: ['log:read', 'application:read'] })
  await services.invitations.create(actor, { email: 'ada@example.com' })
  return { privateKey: privateApp.key!, publicId: publicApp.id, privateId: privateApp.id }
}
