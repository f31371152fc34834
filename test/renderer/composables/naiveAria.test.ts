import { mount } from '@vue/test-utils'
import { NCard, NForm, NFormItem, NInput, NModal, NSelect } from 'naive-ui'
import { afterEach, describe, expect, it } from 'vitest'
import { defineComponent, h, nextTick } from 'vue'
import { repairNaiveAria, watchNaiveAria } from '@renderer/composables/naiveAria'

const labelOf = (element: Element) =>
  element.getAttribute('aria-label') ??
  (element.getAttribute('aria-labelledby') ?? '')
    .split(' ')
    .map((id) => document.getElementById(id)?.querySelector('.n-form-item-label__text')?.textContent ?? document.getElementById(id)?.textContent)
    .join(' ')

describe('repairNaiveAria', () => {
  afterEach(() => {
    document.body.innerHTML = ''
  })

  it('makes a card title one level-2 heading, not a heading inside a heading', () => {
    const wrapper = mount(() => h(NCard, { title: 'REST service' }, () => 'body'), { attachTo: document.body })
    repairNaiveAria(document.body)
    const headings = [...wrapper.element.querySelectorAll('[role="heading"]')]
    expect(headings.map((heading) => [heading.textContent, heading.getAttribute('aria-level')])).toEqual([['REST service', '2']])
  })

  it('names a modal by its title, and a field by its form label rather than its placeholder', async () => {
    mount(
      () =>
        h(NModal, { show: true, preset: 'card', title: 'Reveal token data' }, () =>
          h(NForm, null, () => h(NFormItem, { label: 'Reason', required: true }, () => h(NInput, { placeholder: 'e.g. Customer support ticket #4821' })))
        ),
      { attachTo: document.body }
    )
    await nextTick()
    repairNaiveAria(document.body)
    const dialog = document.querySelector('[role="dialog"]')!
    expect(labelOf(dialog)).toBe('Reveal token data')
    const input = dialog.querySelector('input')!
    expect(labelOf(input)).toBe('Reason')
    expect(input.getAttribute('aria-required')).toBe('true')
  })

  it('gives a select a combobox role, the name passed to it and its open state, as naive-ui renders it', async () => {
    const Select = defineComponent(() => () => h(NSelect, { 'aria-label': 'Invitation status', options: [{ label: 'Pending', value: 'PENDING' }], placeholder: 'Any status' }))
    mount(Select, { attachTo: document.body })
    const observer = watchNaiveAria(document.body)
    try {
      const target = document.querySelector('.n-base-selection-label')!
      expect(target.getAttribute('role')).toBe('combobox')
      expect(target.getAttribute('aria-label')).toBe('Invitation status')
      expect(target.getAttribute('aria-expanded')).toBe('false')
      expect(document.querySelector('.n-select')!.hasAttribute('aria-label')).toBe(false)
    } finally {
      observer.disconnect()
    }
  })
})
