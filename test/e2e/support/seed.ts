/** Puts realistic data in the harness's vault through the services, as the GUI's user. */
import { cardNumber } from './data'
import { startDesktopHarness, type DesktopHarness } from './desktop-harness'
import { callRest } from './rest'

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

const DAY = 86_400_000
const HOUR = 3_600_000

/** The harness's clock while the showcase is seeded: set back, so what is written spreads over the past days. */
class SeedClock {
  private offset = 0
  now(): number {
    return Date.now() - this.offset
  }
  /** Later writes are stamped `daysAgo` days back at `hour` o'clock (local), or now if that time is still to come. */
  at(daysAgo: number, hour: number): void {
    const day = new Date()
    day.setHours(0, 0, 0, 0)
    day.setDate(day.getDate() - daysAgo)
    this.offset = Math.max(0, Date.now() - (day.getTime() + hour * HOUR))
  }
}

/** Routing numbers with a valid ABA checksum. */
const ROUTING_NUMBERS = ['011000015', '021000021', '026009593']
const COUNTRIES = ['DE', 'FR', 'NL', 'US', 'GB', 'SE']
/** Cards the checkout backend stores each day, from 10 days ago to today: the activity chart's shape. */
const CARDS_PER_DAY = [2, 4, 3, 6, 5, 2, 7, 4, 6, 3, 4]

/**
 * A harness over a vault as a team would have it after a week and a half,
 * with the long values that stress the layout: cards stored over REST by a
 * checkout backend every day, bank accounts and generic tokens with metadata
 * (one with many keys and a long custom id), applications with long names,
 * members who joined, pending and expired invitations, webhooks, and
 * reveals in the audit log.
 */
export async function startShowcaseHarness(): Promise<DesktopHarness> {
  const clock = new SeedClock()
  clock.at(CARDS_PER_DAY.length + 1, 8.5)
  const harness = await startDesktopHarness({ clock, tenantName: 'Acme Payments' })
  await seedShowcase(harness, clock)
  return harness
}

async function seedShowcase(harness: DesktopHarness, clock: SeedClock): Promise<void> {
  const services = harness.desktop.requireVault().services
  const owner = harness.desktop.actor()

  clock.at(CARDS_PER_DAY.length, 9.25)
  const checkout = await services.applications.create(owner, {
    name: 'Checkout backend',
    type: 'private',
    permissions: ['token:create', 'token:read'],
    rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:use'] }]
  })
  await services.applications.create(owner, { name: 'Payment form — EU storefront (production)', type: 'public', permissions: ['token:create'] })
  await services.applications.create(owner, { name: 'Ops tooling', type: 'management', permissions: ['log:read', 'application:read'] })
  await services.applications.create(owner, {
    name: 'Nightly reconciliation and payout export for the finance team',
    type: 'private',
    permissions: ['token:read', 'token:search'],
    expires_at: new Date(Date.now() + 90 * DAY).toISOString()
  })

  const base = await harness.serviceUrl()
  let card = 0
  let latestCard = ''
  async function storeCards(daysAgo: number, count: number): Promise<void> {
    for (let i = 0; i < count; i++, card++) {
      clock.at(daysAgo, 9 + i * 0.8)
      const created = await callRest(base, 'POST', '/tokens', checkout.key!, {
        type: 'card',
        data: { number: card % 5 === 1 ? CARD_NUMBERS[card % CARD_NUMBERS.length] : cardNumber(48_210 + card * 37), expiration_month: 1 + (card % 12), expiration_year: 2028 + (card % 4) },
        metadata: { customer: `cus_${10_400 + card * 13}`, source: card % 3 === 0 ? 'pos' : 'checkout', country: COUNTRIES[card % COUNTRIES.length] }
      })
      if (created.status !== 201) throw new Error(`seeding a card failed: ${JSON.stringify(created.body)}`)
      latestCard = created.body.id
      if (i === 0) await callRest(base, 'GET', `/tokens/${latestCard}`, checkout.key!)
    }
  }

  const people = [
    { email: 'ada.lovelace@example.com', first_name: 'Ada', last_name: 'Lovelace' },
    { email: 'grace.hopper@example.com', first_name: 'Grace', last_name: 'Hopper' }
  ]
  /** What the team did in the afternoon, by days ago. */
  const afternoons: Record<number, () => Promise<unknown>> = {
    8: () => Promise.all(people.map((person) => services.invitations.create(owner, { email: person.email }))),
    7: async () => {
      for (const mail of (await services.mail.listOutbox({ page: 1, size: 100 })).data) {
        const person = people.find((p) => p.email === mail.recipient)
        if (person) await services.invitations.accept({ token: new URL(mail.link!).searchParams.get('token')!, first_name: person.first_name, last_name: person.last_name })
      }
    },
    // Receivers on this machine (the desktop app delivers to loopback only); none listens, so their logs show failures.
    6: async () => {
      await services.webhooks.create(owner, {
        name: 'Chargeback desk',
        url: 'http://127.0.0.1:8088/tessera/events',
        events: ['token.updated', 'token.deleted', 'application.key.regenerated'],
        notify_email: 'payments-ops@example.com'
      })
      clock.at(6, 16.25)
      await services.webhooks.create(owner, { name: 'Member directory sync', url: 'http://localhost:5050/hooks/tessera', events: ['tenant.invitation.accepted', 'tenant.member.deleted'] })
    },
    // Invitations last 72 hours: this one has expired by today.
    5: () => services.invitations.create(owner, { email: 'linus@example.com' }),
    4: () =>
      Promise.all(
        ROUTING_NUMBERS.map((routing, index) =>
          services.tokens.create(owner, {
            type: 'bank',
            data: { routing_number: routing, account_number: String(7_310_000_482 + index * 91_733) },
            metadata: { vendor: ['Northwind Traders', 'Contoso Ltd', 'Fabrikam Inc'][index], purpose: 'payouts' }
          })
        )
      ),
    3: async () => {
      await services.tokens.create(owner, { type: 'token', data: '123-45-6789', mask: '{{ data | reveal_last: 4 }}', metadata: { kind: 'ssn', customer: 'cus_10413' } })
      await services.tokens.create(owner, { type: 'token', data: 'jane.doe@example.org', mask: '{{ data | reveal: 1, 12 }}', metadata: { kind: 'email', customer: 'cus_10452' } })
    },
    2: async () => {
      const payout = await services.tokens.create(owner, {
        id: 'payout-account_eu-west-1_merchant-0000481_primary-settlement',
        type: 'bank',
        data: { routing_number: ROUTING_NUMBERS[0], account_number: '4402918376' },
        metadata: { merchant: 'mch_0000481', region: 'eu-west-1', currency: 'EUR', schedule: 'weekly', risk_tier: 'low', onboarded_by: 'grace.hopper', contract: 'MSA-2024-0117', notes: 'primary settlement account' }
      })
      await services.tokens.reveal(owner, payout.token.id, 'Payout failed: checking the account number with the merchant')
    },
    0: async () => {
      await services.invitations.create(owner, { email: 'margaret.hamilton@example.com' })
      await services.tokens.reveal(owner, latestCard, 'Chargeback dispute #4821')
      await services.tokens.update(owner, latestCard, { metadata: { dispute: 'cb_4821' } })
    }
  }

  for (const [index, count] of CARDS_PER_DAY.entries()) {
    const daysAgo = CARDS_PER_DAY.length - 1 - index
    await storeCards(daysAgo, count)
    clock.at(daysAgo, 15.5)
    await afternoons[daysAgo]?.()
  }
  clock.at(0, 24)
}
