import { mount } from '@vue/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import KeyOnceDialog from '@renderer/components/KeyOnceDialog.vue'

describe('component KeyOnceDialog', () => {
  afterEach(() => {
    document.body.innerHTML = ''
  })

  it('shows the key once with a copy button and a warning, and closes on confirmation', async () => {
    const wrapper = mount(KeyOnceDialog, { props: { show: true, title: 'Application created', name: 'Reporting job', secret: 'key_private_abc' }, attachTo: document.body })
    const dialog = document.querySelector('[data-test="key-once"]')!
    expect(dialog.querySelector('[data-test="secret"]')!.textContent).toBe('key_private_abc')
    expect(dialog.textContent).toContain('will not be shown again')
    expect(dialog.querySelector('[aria-label="Copy"]')).not.toBeNull()
    const confirm = [...dialog.querySelectorAll('button')].find((button) => button.textContent?.includes('I have stored the key'))!
    confirm.click()
    expect(wrapper.emitted('close')).toHaveLength(1)
  })
})
