// Lint for the whole repository. Besides the recommended rules, it enforces
// the layering of DESIGN §1: only the Electron glue imports `electron`, the
// service layers never import upward, migrations import nothing from src/,
// and the renderer reaches the main process only through the typed bridge.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import vue from 'eslint-plugin-vue'
import globals from 'globals'

const electronOnlyInGlue = {
  paths: [{ name: 'electron', message: 'Only src/main/electron/ and src/main/index.ts may import electron (DESIGN §1).' }]
}

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**', 'coverage/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...vue.configs['flat/recommended'],
  {
    files: ['**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser } }
  },
  {
    languageOptions: { globals: { ...globals.node } }
  },
  {
    files: ['src/renderer/**/*.{ts,vue}', 'test/renderer/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } }
  },
  {
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' }
  },
  {
    rules: {
      // Control characters in patterns are deliberate: they are what we refuse.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'vue/multi-word-component-names': 'off',
      'vue/max-attributes-per-line': 'off',
      'vue/singleline-html-element-content-newline': 'off',
      'vue/html-self-closing': 'off'
    }
  },
  {
    files: ['src/main/**/*.ts', 'src/shared/**/*.ts', 'db/**/*.ts'],
    ignores: ['src/main/electron/**', 'src/main/index.ts'],
    rules: { 'no-restricted-imports': ['error', electronOnlyInGlue] }
  },
  {
    files: ['src/main/app/**/*.ts', 'src/main/infra/**/*.ts', 'src/main/domain/**/*.ts', 'src/main/storage/**/*.ts', 'src/main/crypto/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...electronOnlyInGlue,
          patterns: [{ group: ['**/server/**', '**/server', '**/cli/**', '**/electron/**', '**/desktop/**'], message: 'Services and below never import the adapters above them (DESIGN §1).' }]
        }
      ]
    }
  },
  {
    // The renderer may import the contracts too: zod, email-addresses (pure) and src/shared only.
    files: ['src/shared/contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...electronOnlyInGlue,
          patterns: [
            { regex: '^(?!zod$|email-addresses$|\\.{1,2}/)', message: 'Contracts import only zod, email-addresses and src/shared modules.' },
            { regex: '^\\.\\./\\.\\./', message: 'Contracts import only zod, email-addresses and src/shared modules.' }
          ]
        }
      ]
    }
  },
  {
    files: ['db/migrations/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**'], message: 'Migrations are self-contained (DESIGN §1).' }] }]
    }
  },
  {
    files: ['src/renderer/**/*.{ts,vue}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer reaches the main process only through window.tessera.' }],
          patterns: [{ group: ['**/main/**', '**/preload/**'], message: 'The renderer imports only from src/shared (types and constants).' }]
        }
      ]
    }
  }
)
