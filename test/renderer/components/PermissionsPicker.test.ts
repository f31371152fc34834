import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { PERMISSIONS_BY_APPLICATION_TYPE } from '@shared/permissions'
import PermissionsPicker from '@renderer/components/PermissionsPicker.vue'

describe('component PermissionsPicker', () => {
  it('offers only the permissions the application type may hold, grouped by area', () => {
    const wrapper = mount(PermissionsPicker, { props: { modelValue: [], allowed: PERMISSIONS_BY_APPLICATION_TYPE.management } })
    const legends = wrapper.findAll('legend').map((legend) => legend.text())
    expect(legends).toEqual(['log', 'application', 'tenant', 'webhook'])
    expect(wrapper.text()).not.toContain('token')
    expect(wrapper.findAll('.n-checkbox')).toHaveLength(PERMISSIONS_BY_APPLICATION_TYPE.management.length)
  })

  it('emits the new selection when a box is ticked', async () => {
    const wrapper = mount(PermissionsPicker, { props: { modelValue: ['token:read'], allowed: PERMISSIONS_BY_APPLICATION_TYPE.public } })
    expect(wrapper.findAll('.n-checkbox').map((box) => box.text())).toEqual(['create', 'update'])
    await wrapper.findAll('.n-checkbox')[0].trigger('click')
    expect(wrapper.emitted('update:modelValue')![0]).toEqual([['token:read', 'token:create']])
  })
})
