import { mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import { nextTick } from 'vue'
import LiveAnnouncer from '@renderer/components/LiveAnnouncer.vue'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { problem } from '../fake-api'

describe('component LiveAnnouncer', () => {
  beforeEach(() => setActivePinia(createPinia()))

  const settle = async () => {
    await nextTick()
    await nextTick()
  }

  it('reads notices in a polite live region and errors in an assertive one', async () => {
    const wrapper = mount(LiveAnnouncer)
    const polite = wrapper.get('[data-test="live-polite"]')
    const assertive = wrapper.get('[data-test="live-assertive"]')
    expect(polite.attributes()).toMatchObject({ role: 'status', 'aria-live': 'polite' })
    expect(assertive.attributes()).toMatchObject({ role: 'alert', 'aria-live': 'assertive' })
    expect(polite.text()).toBe('')

    const store = useNotificationsStore()
    store.notify('Invitation created', 'A mail to ada@example.com is in the outbox.')
    await settle()
    expect(polite.text()).toBe('Invitation created. A mail to ada@example.com is in the outbox.')

    store.reportError(problem(400, 'The request has invalid fields.'), 'Creating the token')
    await settle()
    expect(assertive.text()).toBe('Creating the token failed. The request has invalid fields.')
    expect(polite.text()).toBe('Invitation created. A mail to ada@example.com is in the outbox.')
  })

  it('empties the region before a repeated sentence, so it is read again', async () => {
    const wrapper = mount(LiveAnnouncer)
    const store = useNotificationsStore()
    store.announce('Plaintext hidden')
    await settle()
    store.announce('Plaintext hidden')
    await nextTick()
    expect(wrapper.get('[data-test="live-polite"]').text()).toBe('')
    await settle()
    expect(wrapper.get('[data-test="live-polite"]').text()).toBe('Plaintext hidden')
  })
})
