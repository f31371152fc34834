import { nextTick, ref, watch, type Ref } from 'vue'

const NEXT_INDEX: Record<string, (index: number, count: number) => number> = {
  ArrowRight: (index, count) => (index + 1) % count,
  ArrowLeft: (index, count) => (index - 1 + count) % count,
  Home: () => 0,
  End: (_index, count) => count - 1
}

/**
 * The keyboard of a tab bar (WAI-ARIA tabs) for naive-ui's NTabs, which has
 * none: only the selected tab is in the tab order, arrow keys (and Home, End)
 * select and focus the next one. Use `:ref="bar"` on NTabs, `:tab-props` and
 * `v-bind="panelProps(name)"` on each NTabPane.
 */
export function useTabs<T extends string>(id: string, label: string, names: readonly T[], selected: Ref<T>) {
  const tabId = (name: T) => `${id}-tab-${name}`
  const panelId = (name: T) => `${id}-panel-${name}`

  function onKeydown(event: KeyboardEvent, name: T): void {
    const next = NEXT_INDEX[event.key]
    if (!next) return
    event.preventDefault()
    const target = names[next(names.indexOf(name), names.length)]
    selected.value = target
    void nextTick(() => document.getElementById(tabId(target))?.focus())
  }

  function tabProps(name: T) {
    const current = selected.value === name
    return {
      id: tabId(name),
      role: 'tab' as const,
      'aria-selected': current,
      'aria-controls': panelId(name),
      tabindex: current ? 0 : -1,
      onKeydown: (event: KeyboardEvent) => onKeydown(event, name)
    }
  }

  function panelProps(name: T) {
    return { id: panelId(name), role: 'tabpanel', 'aria-labelledby': tabId(name) }
  }

  // NTabs draws its bar without a role: name it a tablist once it is on screen.
  const bar = ref<{ $el: HTMLElement }>()
  watch(
    bar,
    (tabs) => {
      const wrapper = tabs?.$el.querySelector('.n-tabs-wrapper')
      wrapper?.setAttribute('role', 'tablist')
      wrapper?.setAttribute('aria-label', label)
    },
    { flush: 'post' }
  )

  return { bar, tabProps, panelProps }
}
