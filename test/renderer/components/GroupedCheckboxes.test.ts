import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { PERMISSIONS_BY_APPLICATION_TYPE } from '@shared/permissions'
import GroupedCheckboxes from '@renderer/components/GroupedCheckboxes.vue'

describe('component GroupedCheckboxes', () => {
  it('offers only the permissions the application type may hold, grouped by area and named without it', () => {
    const wrapper = mount(GroupedCheckboxes, { props: { modelValue: [], options: PERMISSIONS_BY_APPLICATION_TYPE.management, separator: ':' } })
    const legends = wrapper.findAll('legend').map((legend) => legend.text())
    expect(legends).toEqual(['log', 'application', 'tenant', 'webhook'])
    expect(wrapper.text()).not.toContain('token')
    expect(wrapper.findAll('.n-checkbox')).toHaveLength(PERMISSIONS_BY_APPLICATION_TYPE.management.length)
  })

  it('emits the new selection when a box is ticked', async () => {
    const wrapper = mount(GroupedCheckboxes, { props: { modelValue: ['token:read'], options: PERMISSIONS_BY_APPLICATION_TYPE.public, separator: ':' } })
    expect(wrapper.findAll('.n-checkbox').map((box) => box.text())).toEqual(['create', 'update'])
    await wrapper.findAll('.n-checkbox')[0].trigger('click')
    expect(wrapper.emitted('update:modelValue')![0]).toEqual([['token:read', 'token:create']])
  })

  it('groups event types by their first word and names each box in full', () => {
    const events = ['token.created', 'token.deleted', 'application.created']
    const wrapper = mount(GroupedCheckboxes, { props: { modelValue: [], options: events, separator: '.', wholeLabels: true } })
    expect(wrapper.findAll('legend').map((legend) => legend.text())).toEqual(['token', 'application'])
    expect(wrapper.findAll('.n-checkbox').map((box) => box.text())).toEqual(events)
  })
})
