import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ConnectTeamRequest, TeamVaultConnection, VaultStatus } from '@shared/ipc'
import { setApi } from '@renderer/api'
import TeamVaultCard from '@renderer/components/TeamVaultCard.vue'
import { useVaultStore } from '@renderer/stores/vault'
import { fakeApi } from '../fake-api'

const embedded: VaultStatus = { state: 'unlocked', dataDir: '/data', keychainAvailable: true, service: { running: true, url: 'http://127.0.0.1:7450' }, version: '1' }
const team: TeamVaultConnection = { kind: 'team', url: 'https://vault.example.com', host: 'vault.example.com', tenantName: 'Acme', remembered: true }
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----'

function mountCard(status: VaultStatus = embedded) {
  useVaultStore().status = status
  return mount(TeamVaultCard, { attachTo: document.body })
}

/** Fills the form and submits it; what the card sent to the main process. */
async function connectWith(fields: { url: string; key: string; ca?: string }): Promise<ConnectTeamRequest> {
  const connect = vi.fn(async (_request: ConnectTeamRequest) => team)
  setApi(fakeApi({ connection: { connect }, vault: { status: vi.fn(async () => ({ ...embedded, team })) } }))
  const wrapper = mountCard()
  await wrapper.get('#team-vault-url').setValue(fields.url)
  await wrapper.get('#team-vault-key').setValue(fields.key)
  if (fields.ca !== undefined) await wrapper.get('#team-vault-ca').setValue(fields.ca)
  await wrapper.get('form').trigger('submit')
  await flushPromises()
  expect(connect).toHaveBeenCalledTimes(1)
  return connect.mock.calls[0][0]
}

describe('component TeamVaultCard', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => {
    setApi(undefined)
    document.body.innerHTML = ''
  })

  it('labels the CA certificate field and describes it with its hint', () => {
    const wrapper = mountCard()
    const field = wrapper.get('textarea#team-vault-ca')
    expect(wrapper.get('label[for="team-vault-ca"]').text()).toBe('CA certificate (PEM, optional)')
    expect(wrapper.get(`#${field.attributes('aria-describedby')}`).text()).toMatch(/own certificate authority/)
  })

  it('sends the CA certificate, without the blank lines around it', async () => {
    expect(await connectWith({ url: ' https://vault.example.com ', key: 'key_management_x', ca: `\n${PEM}\n\n` })).toEqual({
      url: 'https://vault.example.com',
      key: 'key_management_x',
      caCertificate: PEM
    })
  })

  it('sends no CA certificate when the field is left empty or blank', async () => {
    expect(await connectWith({ url: 'https://vault.example.com', key: 'key_management_x' })).toEqual({ url: 'https://vault.example.com', key: 'key_management_x' })
    document.body.innerHTML = ''
    expect(await connectWith({ url: 'https://vault.example.com', key: 'key_management_x', ca: ' \n ' })).not.toHaveProperty('caCertificate')
  })

  it('says which certificate authorities an https connection trusts, and nothing of the kind over plain http', () => {
    expect(mountCard({ ...embedded, team: { ...team, privateCa: true } }).get('[data-test="team-vault-trust"]').text()).toBe('the private CA given, and no other')
    document.body.innerHTML = ''
    expect(mountCard({ ...embedded, team }).get('[data-test="team-vault-trust"]').text()).toBe('the usual public certificate authorities')
    document.body.innerHTML = ''
    expect(mountCard({ ...embedded, team: { ...team, url: 'http://127.0.0.1:4390', host: '127.0.0.1:4390' } }).find('[data-test="team-vault-trust"]').exists()).toBe(false)
  })
})
