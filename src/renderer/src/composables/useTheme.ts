import { usePreferredDark, useStorage } from '@vueuse/core'
import { darkTheme, type GlobalThemeOverrides } from 'naive-ui'
import { computed, watchEffect } from 'vue'

export type ThemePreference = 'system' | 'light' | 'dark'

// Module-level singletons (Vitesse's composables/dark.ts): one preference for the whole window.
const preference = useStorage<ThemePreference>('tessera.theme', 'system')
const prefersDark = usePreferredDark()

const LIGHT: GlobalThemeOverrides = {
  common: {
    primaryColor: '#3f5bd9',
    primaryColorHover: '#5570e6',
    primaryColorPressed: '#2f49b8',
    primaryColorSuppl: '#5570e6',
    borderRadius: '6px',
    fontFamily: 'Inter, "Segoe UI", system-ui, -apple-system, sans-serif',
    fontFamilyMono: '"JetBrains Mono", "Cascadia Code", ui-monospace, Menlo, monospace'
  }
}

const DARK: GlobalThemeOverrides = {
  common: {
    ...LIGHT.common,
    primaryColor: '#8197ff',
    primaryColorHover: '#97a9ff',
    primaryColorPressed: '#6a82f0',
    primaryColorSuppl: '#97a9ff'
  }
}

/** Light/dark theme: follows the OS unless the user picked one; the choice is remembered. */
export function useTheme() {
  const isDark = computed(() => preference.value === 'dark' || (preference.value === 'system' && prefersDark.value))
  const theme = computed(() => (isDark.value ? darkTheme : null))
  const overrides = computed(() => (isDark.value ? DARK : LIGHT))

  watchEffect(() => {
    document.documentElement.dataset.theme = isDark.value ? 'dark' : 'light'
  })

  function toggle(): void {
    preference.value = isDark.value ? 'light' : 'dark'
  }

  return { preference, isDark, theme, overrides, toggle }
}
