import { darkTheme, lightTheme, useThemeVars } from 'naive-ui'
import { computed, h, type ComputedRef, type VNode } from 'vue'
import { useTheme } from './useTheme'

export type CellTagType = 'default' | 'info' | 'success' | 'warning' | 'error'

const TYPES: CellTagType[] = ['default', 'info', 'success', 'warning', 'error']

/**
 * A table cell's badge (a row's type or operation): a plain span with the look of
 * naive-ui's small borderless NTag. An NTag per row is a component per row, set up,
 * themed and updated with every page drawn; the badge's colours are computed once
 * per theme, from naive-ui's own tag theme, as CSS variables set on the table
 * (`cellTagVars`), and `styles.css` draws `.cell-tag` with them.
 */
export function cellTag(type: CellTagType, text: string): VNode {
  return h('span', { class: `cell-tag cell-tag--${type}` }, text)
}

/** The CSS variables `.cell-tag` reads, for the current theme (with the app's overrides). */
export function useCellTagVars(): ComputedRef<Record<string, string>> {
  const common = useThemeVars()
  const { isDark } = useTheme()
  return computed(() => {
    const tag = (isDark.value ? darkTheme : lightTheme).Tag.self!(common.value)
    const vars: Record<string, string> = {
      '--cell-tag-height': tag.heightSmall,
      '--cell-tag-font-size': tag.fontSizeSmall,
      '--cell-tag-padding': tag.padding,
      '--cell-tag-radius': tag.borderRadius
    }
    for (const type of TYPES) {
      const suffix = type === 'default' ? '' : type[0].toUpperCase() + type.slice(1)
      vars[`--cell-tag-${type}-color`] = tag[`color${suffix}` as 'color']
      vars[`--cell-tag-${type}-text`] = tag[`textColor${suffix}` as 'textColor']
    }
    return vars
  })
}
