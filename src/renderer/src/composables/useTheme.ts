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
    // naive-ui's status colours are too light for text on white and on their own tinted badges (1.9–3.4:1):
    // these reach 4.5:1 on both, and white text on them too.
    infoColor: '#0d5bbf',
    infoColorHover: '#1060c9',
    infoColorPressed: '#0a4da3',
    infoColorSuppl: '#1060c9',
    successColor: '#0b6e3c',
    successColorHover: '#137a45',
    successColorPressed: '#0a5c32',
    successColorSuppl: '#137a45',
    warningColor: '#8a5200',
    warningColorHover: '#935600',
    warningColorPressed: '#744500',
    warningColorSuppl: '#935600',
    errorColor: '#b8233f',
    errorColorHover: '#c62f4b',
    errorColorPressed: '#a01d36',
    errorColorSuppl: '#c62f4b',
    // Secondary text (form hints, statistic labels): naive-ui's grey is 4.2:1 on white.
    textColor3: '#5f6473',
    borderRadius: '6px',
    fontFamily: 'Inter, "Segoe UI", system-ui, -apple-system, sans-serif',
    fontFamilyMono: '"JetBrains Mono", "Cascadia Code", ui-monospace, Menlo, monospace'
  }
}

const DARK: GlobalThemeOverrides = {
  common: {
    borderRadius: LIGHT.common!.borderRadius,
    fontFamily: LIGHT.common!.fontFamily,
    fontFamilyMono: LIGHT.common!.fontFamilyMono,
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
