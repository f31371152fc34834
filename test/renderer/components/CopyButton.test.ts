import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { setApi } from '@renderer/api'
import CopyButton from '@renderer/components/CopyButton.vue'
import KeyOnceDialog from '@renderer/components/KeyOnceDialog.vue'
import { useNotificationsStore } from '@renderer/stores/notifications'
import { fakeApi, problem } from '../fake-api'

function fakeClipboard() {
  const copySecret = vi.fn(async (_text: string) => undefined)
  setApi(fakeApi({ clipboard: { copySecret } }))
  return { copySecret }
}

describe('copying secrets', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    vi.useFakeTimers()
  })
  afterEach(() => {
    setApi(undefined)
    vi.useRealTimers()
    document.body.innerHTML = ''
  })

  it('hands a secret to the main process, which clears it off the clipboard later, and says so', async () => {
    const { copySecret } = fakeClipboard()
    const wrapper = mount(CopyButton, { props: { value: 'key_private_abc', secret: true }, attachTo: document.body })
    await wrapper.find('button').trigger('click')
    await flushPromises()
    expect(copySecret).toHaveBeenCalledWith('key_private_abc')
    expect(document.body.textContent).toContain('Copied; cleared from the clipboard in 30 s')
    await vi.advanceTimersByTimeAsync(1500)
    expect(document.body.textContent).not.toContain('Copied;')
  })

  it('copies the key shown once as a secret', async () => {
    const { copySecret } = fakeClipboard()
    mount(KeyOnceDialog, { props: { show: true, title: 'Application created', name: 'Job', secret: 'key_private_once' }, attachTo: document.body })
    ;(document.querySelector('[data-test="key-once"] [aria-label="Copy"]') as HTMLButtonElement).click()
    await flushPromises()
    expect(copySecret).toHaveBeenCalledWith('key_private_once')
  })

  it('copies what is not secret (a token id, the service address) without the main process', async () => {
    const { copySecret } = fakeClipboard()
    // happy-dom has no clipboard permission, so @vueuse's useClipboard takes its legacy path.
    const execCommand = vi.fn(() => true)
    Object.assign(document, { execCommand })
    const wrapper = mount(CopyButton, { props: { value: 'tok_123' } })
    await wrapper.find('button').trigger('click')
    await flushPromises()
    expect(execCommand).toHaveBeenCalledWith('copy')
    expect(copySecret).not.toHaveBeenCalled()
  })

  it('reports a failed copy as an error toast', async () => {
    setApi(fakeApi({ clipboard: { copySecret: vi.fn(async () => Promise.reject(problem(503, 'The vault is locked.'))) } }))
    const wrapper = mount(CopyButton, { props: { value: 'key_x', secret: true } })
    await wrapper.find('button').trigger('click')
    await flushPromises()
    expect(useNotificationsStore().queue).toEqual([expect.objectContaining({ kind: 'error', title: 'Copying failed' })])
  })
})
