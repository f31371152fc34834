import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { Problem, Webhook } from '@shared/types'
import WebhookFormModal from '@renderer/components/WebhookFormModal.vue'

const EVENT_TYPES = ['token.created', 'token.deleted', 'session.created']
const existing: Webhook = {
  id: '0f7c5a55-7a0e-4d6b-9a44-5a3c0f2e7d11',
  tenant_id: '6b1f4c2a-1c3e-4a9e-8f0d-3e2b7c9a1d55',
  status: 'enabled',
  name: 'Order system',
  url: 'http://127.0.0.1:8080/events',
  events: ['token.created'],
  created_by: 'owner',
  created_at: '2026-11-26T10:00:00.000Z'
}

async function openForm(webhook?: Webhook) {
  const wrapper = mount(WebhookFormModal, { props: { show: false, eventTypes: EVENT_TYPES, ...(webhook ? { webhook } : {}) }, attachTo: document.body })
  await wrapper.setProps({ show: true })
  await flushPromises()
  return wrapper
}

const text = (testId: string) => document.querySelector(`[data-test="${testId}"]`)?.textContent ?? ''

async function submit(): Promise<void> {
  ;(document.querySelector('[data-test="webhook-submit"]') as HTMLButtonElement).click()
  await flushPromises()
}

describe('component WebhookFormModal', () => {
  afterEach(() => {
    document.body.innerHTML = ''
  })

  it('offers the catalogue as check boxes grouped by their first word', async () => {
    await openForm()
    expect([...document.querySelectorAll('legend')].map((legend) => legend.textContent)).toEqual(['token', 'session'])
    expect(text('webhook-events')).toContain('token.deleted')
  })

  it('sends every field of an edit again (the service replaces them all), without an empty notify e-mail', async () => {
    const wrapper = await openForm(existing)
    await submit()
    expect(wrapper.emitted('update')).toEqual([[existing.id, { name: 'Order system', url: 'http://127.0.0.1:8080/events', events: ['token.created'] }]])
  })

  it("shows the service's field errors at their fields, an unknown event by its name", async () => {
    const wrapper = await openForm(existing)
    await submit()
    const problem: Problem = {
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'The request has invalid fields.',
      errors: { url: ['must be an http or https URL'], 'events[0]': ['is not an event type'] }
    }
    await wrapper.setProps({ problem })
    expect(text('webhook-url-item')).toContain('must be an http or https URL')
    expect(text('webhook-events-item')).toContain('token.created is not an event type')
    expect(document.querySelector('[data-test="webhook-form-error"]')).toBeNull()
  })

  it('shows a refusal that names no field above the buttons', async () => {
    const wrapper = await openForm()
    const problem: Problem = { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'A tenant may have at most 5 webhooks; delete one first.' }
    await wrapper.setProps({ problem })
    expect(text('webhook-form-error')).toBe('A tenant may have at most 5 webhooks; delete one first.')
  })
})
