import { flushPromises, mount } from '@vue/test-utils'
import { NDialogProvider } from 'naive-ui'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { defineComponent, h } from 'vue'
import type { AuditArchive, AuditArchiveStatus, DesktopSettings } from '@shared/ipc'
import { setApi } from '@renderer/api'
import AuditArchiveCard from '@renderer/components/AuditArchiveCard.vue'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { useSettingsStore } from '@renderer/stores/settings'
import { fakeApi, problem } from '../fake-api'

const NOW = Date.parse('2026-11-25T12:00:00.000Z')
const settings: DesktopSettings = { port: 4390, idleLockMinutes: 15, auditRetentionDays: 0 }
const archived: AuditArchive = {
  file: '/data/audit-archive/audit-2026-11-25T12-00-00.000Z-seq-1-120.jsonl',
  entries: 120,
  firstSeq: 1,
  lastSeq: 120,
  sha256: 'ab'.repeat(32),
  before: '2026-08-27T00:00:00.000Z',
  archivedAt: '2026-11-25T12:00:00.000Z'
}

/** The card inside Settings, which reads the settings (the retention) the card shows. */
function mountCard() {
  void useSettingsStore().load()
  const Host = defineComponent({ render: () => h(NDialogProvider, () => h(AuditArchiveCard)) })
  return mount(Host, { attachTo: document.body })
}

const dialogButton = (name: string) => [...document.querySelectorAll('.n-dialog button')].find((button) => button.textContent?.trim() === name) as HTMLButtonElement
/** The input a visible label names through its `for`, as assistive technology finds it. */
function labelled(text: string): HTMLInputElement {
  const label = [...document.querySelectorAll('label[for]')].find((candidate) => candidate.textContent?.includes(text))
  return document.getElementById(label!.getAttribute('for')!) as HTMLInputElement
}

describe('Settings → Audit archive', () => {
  let status: AuditArchiveStatus
  let finishArchive: (value: AuditArchive | null) => void
  const archive = vi.fn(
    (_before: string) =>
      new Promise<AuditArchive | null>((resolve) => {
        finishArchive = (value) => {
          status = { ...status, last: value }
          resolve(value)
        }
      })
  )
  const update = vi.fn(async (patch: Partial<DesktopSettings>) => {
    status = { ...status, retentionDays: patch.auditRetentionDays ?? status.retentionDays }
    return { ...settings, ...patch } as DesktopSettings
  })

  beforeEach(() => {
    setActivePinia(createPinia())
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(NOW)
    status = { directory: '/data/audit-archive', retentionDays: 0, last: null }
    archive.mockClear()
    update.mockClear()
    setApi(
      fakeApi({
        logs: { archiveStatus: vi.fn(async () => status), archive },
        settings: { get: vi.fn(async () => settings), update },
        vault: { status: vi.fn(async () => ({ state: 'unlocked' as const, dataDir: '/data', keychainAvailable: false, service: { running: true }, version: '1' })) }
      })
    )
  })
  afterEach(() => {
    setApi(undefined)
    vi.useRealTimers()
    document.body.innerHTML = ''
  })

  it('labels its inputs and names the archive folder before any archive', async () => {
    const wrapper = mountCard()
    await flushPromises()
    expect(labelled('Keep audit entries for').value).toBe('0')
    expect(labelled('Archive the entries created before').value).toBe('2026-08-27')
    expect(wrapper.text()).toContain('Entries are kept for ever.')
    expect(wrapper.text()).toContain('Archives go to /data/audit-archive.')
    wrapper.unmount()
  })

  it('saves the retention in days', async () => {
    const wrapper = mountCard()
    await flushPromises()
    const input = labelled('Keep audit entries for')
    input.value = '365'
    input.dispatchEvent(new Event('input'))
    input.dispatchEvent(new Event('blur'))
    await wrapper.find('[data-test="save-audit-retention"]').trigger('click')
    await flushPromises()
    expect(update).toHaveBeenCalledWith({ auditRetentionDays: 365 })
    expect(wrapper.text()).toContain('Entries older than 365 days are archived every hour.')
    wrapper.unmount()
  })

  it('archives after confirmation, shows progress while it runs, then the file, its entries and SHA-256', async () => {
    const wrapper = mountCard()
    await flushPromises()
    await wrapper.find('[data-test="archive-now"]').trigger('click')
    await flushPromises()
    dialogButton('Archive').click()
    await flushPromises()
    expect(archive).toHaveBeenCalledWith('2026-08-27')
    expect(document.querySelector('[data-test="archive-progress"]')?.getAttribute('role')).toBe('status')

    finishArchive(archived)
    await flushPromises()
    expect(document.querySelector('[data-test="archive-progress"]')).toBeNull()
    expect(wrapper.find('[data-test="archive-file"]').text()).toBe(archived.file)
    expect(wrapper.find('[data-test="archive-sha256"]').text()).toBe(archived.sha256)
    expect(wrapper.find('[data-test="archive-last"]').text()).toContain('120 entries (seq 1–120)')
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'success', title: '120 audit entries archived' })])
    wrapper.unmount()
  })

  it('says so when nothing was older, and reports a refused date with its field', async () => {
    const wrapper = mountCard()
    await flushPromises()
    await wrapper.find('[data-test="archive-now"]').trigger('click')
    await flushPromises()
    dialogButton('Archive').click()
    finishArchive(null)
    await flushPromises()
    expect(useNotificationsStore().queue.at(-1)).toMatchObject({ kind: 'success', title: 'Nothing to archive' })

    archive.mockRejectedValueOnce(problem(400, 'The request has invalid fields.', { before: ['must not be in the future'] }))
    await wrapper.find('[data-test="archive-now"]').trigger('click')
    await flushPromises()
    dialogButton('Archive').click()
    await flushPromises()
    expect(useNotificationsStore().queue.at(-1)).toMatchObject({ kind: 'error', title: 'Archiving the audit log failed', fields: ['before: must not be in the future'] })
    wrapper.unmount()
  })
})
