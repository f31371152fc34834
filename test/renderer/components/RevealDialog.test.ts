import { mount } from '@vue/test-utils'
import { nextTick } from 'vue'
import { afterEach, describe, expect, it } from 'vitest'
import RevealDialog from '@renderer/components/RevealDialog.vue'

/** The reveal dialog holds back a reason the service would refuse, and says why. */
describe('component RevealDialog', () => {
  afterEach(() => {
    document.body.innerHTML = ''
  })

  async function typed(reason: string) {
    const wrapper = mount(RevealDialog, { props: { show: true, tokenId: 'tok-1' }, attachTo: document.body })
    const input = document.querySelector<HTMLInputElement>('[data-test="reveal-reason"] input')!
    input.value = reason
    input.dispatchEvent(new Event('input'))
    await nextTick()
    const button = document.querySelector<HTMLButtonElement>('[data-test="reveal-confirm"]')!
    const dialogText = document.querySelector('[data-test="reveal-dialog"]')!.textContent ?? ''
    return { wrapper, button, dialogText }
  }

  it.each([
    ['three zero-width spaces', '\u200b\u200b\u200b', 'Remove the control or invisible characters'],
    ['a reason with a zero-width space inside', 'ticket\u200b 4821', 'Remove the control or invisible characters'],
    ['combining marks alone', 'a\u0301\u0301', 'Give a reason of at least 3 characters people can see'],
    ['Hangul fillers', '\u3164\u3164\u3164', 'Give a reason of at least 3 characters people can see']
  ])('keeps Reveal off for %s and says why', async (_, reason, message) => {
    const { wrapper, button, dialogText } = await typed(reason)
    expect(button.disabled).toBe(true)
    expect(dialogText).toContain(message)
    button.closest('form')!.dispatchEvent(new Event('submit'))
    expect(wrapper.emitted('confirm')).toBeUndefined()
  })

  it('reveals with a reason of three visible characters, in any script, trimmed', async () => {
    const { wrapper, button, dialogText } = await typed('  票据号 ')
    expect(button.disabled).toBe(false)
    expect(dialogText).not.toContain('Give a reason')
    button.closest('form')!.dispatchEvent(new Event('submit'))
    expect(wrapper.emitted('confirm')).toEqual([['票据号']])
  })

  it('says nothing while the reason is still short', async () => {
    const { button, dialogText } = await typed('ab')
    expect(button.disabled).toBe(true)
    expect(dialogText).not.toContain('Give a reason')
  })
})
