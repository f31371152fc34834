import { flushPromises, mount } from '@vue/test-utils'
import { NSelect } from 'naive-ui'
import { afterEach, describe, expect, it } from 'vitest'
import type { Token } from '@shared/types'
import TokenFormModal from '@renderer/components/TokenFormModal.vue'

const card: Token = { id: 'tok_1', tenant_id: 't', type: 'card', fingerprint: 'f', containers: ['/pci/high/'], data: { number: 'XXXXXXXXXXXX4242' } }

async function openForm(token?: Token) {
  const wrapper = mount(TokenFormModal, { props: { show: false, ...(token ? { token } : {}) }, attachTo: document.body })
  await wrapper.setProps({ show: true })
  await flushPromises()
  return wrapper
}

async function submitData(wrapper: Awaited<ReturnType<typeof openForm>>, data: string) {
  const textarea = document.querySelector('[data-test="token-data"] textarea') as HTMLTextAreaElement
  textarea.value = data
  textarea.dispatchEvent(new Event('input'))
  ;(document.querySelector('[data-test="token-submit"]') as HTMLButtonElement).click()
  await flushPromises()
  return document.querySelector('[data-test="token-form-error"]')?.textContent ?? ''
}

describe('component TokenFormModal', () => {
  afterEach(() => {
    document.body.innerHTML = ''
  })

  it('offers every token type', async () => {
    const wrapper = await openForm()
    expect(wrapper.findComponent(NSelect).props('options')).toEqual([
      { label: 'token (any value)', value: 'token' },
      { label: 'card', value: 'card' },
      { label: 'bank', value: 'bank' }
    ])
  })

  it('names every card rule the data breaks before anything is sent', async () => {
    const wrapper = await openForm()
    wrapper.findComponent(NSelect).vm.$emit('update:value', 'card')
    await flushPromises()
    const error = await submitData(wrapper, '{"number": "4242424242424241", "expiration_month": 13, "cvc": "12"}')
    expect(error).toContain('data.number: fails the Luhn check')
    expect(error).toContain('data.expiration_month: must be an integer from 1 to 12')
    expect(error).toContain('data.cvc: must be 3 or 4 digits')
    expect(error).not.toContain('4242424242424241')
    expect(wrapper.emitted('submit')).toBeUndefined()
  })

  it('sends valid bank data as it was entered', async () => {
    const wrapper = await openForm()
    wrapper.findComponent(NSelect).vm.$emit('update:value', 'bank')
    await flushPromises()
    expect(await submitData(wrapper, '{"routing_number": "011000015", "account_number": "123456789"}')).toBe('')
    expect(wrapper.emitted('submit')).toEqual([[{ type: 'bank', data: { routing_number: '011000015', account_number: '123456789' } }]])
  })

  it('checks an edit only in the fields it changes, and refuses removing the card number', async () => {
    const wrapper = await openForm(card)
    expect(await submitData(wrapper, '{"number": null}')).toBe('data.number: is required')
    expect(wrapper.emitted('submit')).toBeUndefined()
    expect(await submitData(wrapper, '{"expiration_month": 7, "cvc": null}')).toBe('')
    expect(wrapper.emitted('submit')).toEqual([[{ data: { expiration_month: 7, cvc: null } }]])
  })
})
