import { flushPromises, mount } from '@vue/test-utils'
import { NDialogProvider } from 'naive-ui'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { defineComponent, h } from 'vue'
import type { Application, Page, Session } from '@shared/types'
import { setApi } from '@renderer/api'
import { useNotificationsStore } from '@renderer/stores/notifications'
import SessionsView from '@renderer/views/SessionsView.vue'
import { fakeApi } from '../fake-api'

const NOW = Date.parse('2026-11-25T12:00:00.000Z')

const application = (id: string, name: string, type: Application['type']): Application => ({
  id,
  tenant_id: 't',
  name,
  type,
  permissions: ['token:create'],
  rules: [],
  created_at: '2026-11-25T10:00:00.000Z',
  keys: []
})
const applications = [application('app-page', 'Payment form', 'public'), application('app-backend', 'Checkout backend', 'private')]

const session = (id: string, overrides: Partial<Session> = {}): Session => ({
  id,
  tenant_id: 't',
  application_id: 'app-page',
  status: 'AUTHORIZED',
  authorized_by: 'app-backend',
  authorized_at: '2026-11-25T11:59:00.000Z',
  permissions: ['token:create', 'token:read'],
  rules: [],
  expires_at: new Date(NOW + 90_000).toISOString(),
  created_at: '2026-11-25T11:58:00.000Z',
  ...overrides
})

const page = <T>(data: T[]): Page<T> => ({ pagination: { total_items: data.length, page_number: 1, page_size: 20, total_pages: 1 }, data })

function mountView() {
  const Host = defineComponent({ render: () => h(NDialogProvider, () => h(SessionsView)) })
  return mount(Host, { attachTo: document.body })
}

/** A button of the open confirmation dialog. */
const dialogButton = (name: string) => [...document.querySelectorAll('.n-dialog button')].find((button) => button.textContent?.trim() === name) as HTMLButtonElement

describe('view Sessions', () => {
  let listed: Session[]
  const list = vi.fn(async () => page(listed))
  const revoke = vi.fn(async (id: string) => {
    listed = listed.filter((s) => s.id !== id)
  })

  beforeEach(() => {
    setActivePinia(createPinia())
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(NOW)
    listed = [session('s-authorized'), session('s-pending', { status: 'PENDING', authorized_by: undefined, authorized_at: undefined, permissions: [] })]
    list.mockClear()
    revoke.mockClear()
    setApi(
      fakeApi({
        applications: { list: vi.fn(async (query: { type?: string[] }) => page(applications.filter((a) => query.type?.includes(a.type)))) },
        sessions: { list, revoke }
      })
    )
  })
  afterEach(() => {
    setApi(undefined)
    vi.useRealTimers()
    document.body.innerHTML = ''
  })

  it('lists the active sessions with their applications, state, access and expiry countdown', async () => {
    mountView()
    await flushPromises()
    expect(list).toHaveBeenCalledWith({ page: 1, size: 20 })
    const rows = [...document.querySelectorAll('[data-test="sessions-table"] tbody tr')]
    expect(rows).toHaveLength(2)
    expect(rows[0].textContent).toContain('Payment form')
    expect(rows[0].textContent).toContain('authorized by Checkout backend')
    expect(rows[0].textContent).toContain('create, read')
    expect(rows[0].querySelector('[data-test="countdown"]')!.textContent).toMatch(/expires in 1:30/)
    expect(rows[1].textContent).toContain('not authorized')
    // Keys exist only in the window that created the session.
    expect(document.querySelector('[data-test="session-key"]')).toBeNull()
  })

  it('revokes a session only after confirmation, then lists again', async () => {
    mountView()
    await flushPromises()
    ;(document.querySelector('[data-test="revoke-session"]') as HTMLButtonElement).click()
    await flushPromises()
    expect(document.body.textContent).toContain('Revoke this session?')
    dialogButton('Cancel').click()
    await flushPromises()
    expect(revoke).not.toHaveBeenCalled()

    ;(document.querySelector('[data-test="revoke-session"]') as HTMLButtonElement).click()
    await flushPromises()
    dialogButton('Revoke').click()
    await flushPromises()
    expect(revoke).toHaveBeenCalledWith('s-authorized')
    expect(list).toHaveBeenCalledTimes(2)
    expect(document.querySelectorAll('[data-test="sessions-table"] tbody tr')).toHaveLength(1)
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ title: 'Session revoked' })])
  })
})
