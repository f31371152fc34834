// Lint for the whole repository. Besides the recommended rules, it enforces
// the layering of src/main (docs/architecture.md) as one import zone per
// folder: the doors (server, desktop with its Electron glue, cli) over app/,
// app/ over domain/, storage/, crypto/ and infra/, nothing importing upward;
// only the Electron glue imports `electron`, migrations import nothing from
// src/, and the renderer reaches the main process only through the typed
// bridge. `npm run lint` also fails on any import cycle (dpdm, package.json).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import vue from 'eslint-plugin-vue'
import globals from 'globals'

const electronOnlyInGlue = { name: 'electron', message: 'Only src/main/electron/ and src/main/index.ts may import electron.' }

/** Relative imports of the folders of src/main named, from anywhere in src/main. */
const folders = (...names) => names.flatMap((name) => [`**/${name}`, `**/${name}/**`])

/**
 * One import zone: `files` may not import the src/main folders in `forbidden`
 * (type-only imports of those in `typesOnly` are fine), nor the packages in
 * `packages`, nor anything matching `regex`.
 */
function zone(files, { forbidden = [], typesOnly = [], packages = [], regex, why }) {
  const patterns = [
    ...(forbidden.length ? [{ group: folders(...forbidden), message: why }] : []),
    ...(typesOnly.length ? [{ group: folders(...typesOnly), allowTypeImports: true, message: why }] : []),
    ...(regex ? [{ regex, message: why }] : [])
  ]
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [electronOnlyInGlue, ...packages.map((name) => ({ name, message: why }))], patterns }]
    }
  }
}

const DOORS = ['server', 'desktop', 'cli', 'electron']
/** Packages that belong to one layer: the database, libsodium, SMTP, HTTP. */
const STORAGE_PACKAGES = ['knex', 'sqlite3']
const CRYPTO_PACKAGES = ['libsodium-wrappers']

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
  zone(['src/shared/**/*.ts', 'db/**/*.ts'], { why: 'Only the Electron glue imports electron.' }),
  {
    // The preload exposes the contract of src/shared over electron's ipcRenderer, and nothing else.
    files: ['src/preload/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./(?!shared/)', message: 'The preload imports only electron and src/shared.' }] }] }
  },
  // The pure rules: no I/O, no database, no libsodium. Randomness (alias filters) and yielding to the event loop (the expression budget) are not I/O.
  zone(['src/main/domain/**/*.ts'], {
    regex: '^(?!zod$|liquidjs$|luxon$|node:crypto$|node:timers/promises$|\\.{1,2}/)|^\\.\\./(?!\\.\\./shared/)',
    why: 'domain/ is pure: it imports only src/shared and zod, liquidjs, luxon (plus node:crypto randomness and node:timers yielding).'
  }),
  zone(['src/main/storage/**/*.ts'], {
    forbidden: ['app', 'bootstrap', 'crypto', 'infra', ...DOORS],
    typesOnly: ['domain'],
    packages: [...CRYPTO_PACKAGES, 'nodemailer', 'koa'],
    why: 'storage/ imports nothing above it (domain types only).'
  }),
  zone(['src/main/crypto/**/*.ts'], {
    regex: '^\\.\\./(?!domain/)',
    typesOnly: ['domain'],
    packages: [...STORAGE_PACKAGES, 'nodemailer', 'koa'],
    why: 'crypto/ imports nothing from the rest of src/main (domain types only).'
  }),
  zone(['src/main/infra/**/*.ts'], {
    forbidden: ['domain', 'app', 'bootstrap', 'storage', 'crypto', ...DOORS],
    packages: [...CRYPTO_PACKAGES, 'knex'],
    why: 'infra/ imports nothing above it.'
  }),
  zone(['src/main/app/**/*.ts'], {
    forbidden: ['bootstrap', ...DOORS],
    packages: [...STORAGE_PACKAGES, ...CRYPTO_PACKAGES, 'nodemailer', 'koa'],
    why: 'app/ reaches the database through storage/, libsodium through crypto/, SMTP through infra/, and never the doors or bootstrap/.'
  }),
  zone(['src/main/bootstrap/**/*.ts'], {
    forbidden: ['desktop', 'cli', 'electron'],
    packages: [...STORAGE_PACKAGES, ...CRYPTO_PACKAGES],
    why: 'bootstrap/ composes app/, storage/, crypto/ and infra/ and hosts the REST server; the other doors use it.'
  }),
  ...['server', 'desktop', 'cli'].map((door) =>
    zone([`src/main/${door}/**/*.ts`], {
      forbidden: ['domain', 'storage', 'crypto', ...DOORS.filter((other) => other !== door)],
      packages: [...STORAGE_PACKAGES, ...CRYPTO_PACKAGES],
      why: 'A door imports app/, bootstrap/, infra/ and src/shared, never another door.'
    })
  ),
  {
    // The Electron glue: the desktop door's other half, which registers desktop/'s handlers with ipcMain.
    files: ['src/main/electron/**/*.ts', 'src/main/index.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: STORAGE_PACKAGES.concat(CRYPTO_PACKAGES).map((name) => ({ name, message: 'The Electron glue imports desktop/, app/, bootstrap/ and infra/.' })),
          patterns: [{ group: folders('domain', 'storage', 'crypto', 'server', 'cli'), message: 'The Electron glue imports desktop/, app/, bootstrap/ and infra/.' }]
        }
      ]
    }
  },
  {
    // The renderer may import the contracts too: zod, email-addresses (pure) and src/shared only.
    files: ['src/shared/contracts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [electronOnlyInGlue],
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
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**'], message: 'Migrations are self-contained.' }] }]
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
