import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { PERMISSIONS_BY_APPLICATION_TYPE } from '@shared/permissions'
import type { AccessRule } from '@shared/types'
import RulesEditor from '@renderer/components/RulesEditor.vue'

function mountEditor(rules: AccessRule[], conditions = false) {
  return mount(RulesEditor, { props: { modelValue: rules, allowed: PERMISSIONS_BY_APPLICATION_TYPE.private, conditions } })
}

describe('component RulesEditor', () => {
  it('adds a container rule with the next priority for applications', async () => {
    const wrapper = mountEditor([{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:use'] }])
    await wrapper.get('[data-test="add-rule"]').trigger('click')
    const [rules] = wrapper.emitted('update:modelValue')!.at(-1) as [AccessRule[]]
    expect(rules[1]).toEqual({ priority: 2, container: '/', transform: 'mask', permissions: [] })
  })

  it('adds a rule with conditions, not a container, for sessions', async () => {
    const wrapper = mountEditor([], true)
    await wrapper.get('[data-test="add-rule"]').trigger('click')
    const [rules] = wrapper.emitted('update:modelValue')!.at(-1) as [AccessRule[]]
    expect(rules[0]).toEqual({ priority: 1, conditions: [{ attribute: 'container', operator: 'starts_with', value: '/' }], transform: 'mask', permissions: [] })
    expect(rules[0]).not.toHaveProperty('container')
  })

  it('removes a rule', async () => {
    const wrapper = mountEditor([
      { priority: 1, container: '/a/', transform: 'mask', permissions: ['token:read'] },
      { priority: 2, container: '/b/', transform: 'redact', permissions: ['token:read'] }
    ])
    await wrapper.get('[aria-label="Remove rule 1"]').trigger('click')
    const [rules] = wrapper.emitted('update:modelValue')!.at(-1) as [AccessRule[]]
    expect(rules.map((rule) => rule.container)).toEqual(['/b/'])
  })
})
