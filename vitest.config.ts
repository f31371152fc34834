import vue from '@vitejs/plugin-vue'
import { resolve } from 'node:path'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // API tests start real servers and SQLite files. Much of a test's time is spent waiting on
    // them (child processes, PostgreSQL, fsync), so two workers on two cores; vitest's default is one.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'node', include: ['test/**/*.test.ts'], exclude: ['test/renderer/**', 'test/e2e/**'], environment: 'node' }
      },
      {
        // The API suite again on a team vault: each test service on a fresh PostgreSQL database
        // (TESSERA_TEST_POSTGRES, default postgres://postgres@127.0.0.1:5432/test; see test/helpers/postgres.ts).
        extends: true,
        // The CLI suites start `tessera` on data directories of their own (SQLite) whatever the engine: they run once, in `node`.
        test: {
          name: 'api-postgres',
          include: ['test/api/**/*.test.ts'],
          exclude: ['test/api/cli/**', 'test/api/tokenize/crash-tokenize.test.ts'],
          environment: 'node',
          env: { TESSERA_TEST_ENGINE: 'postgres' }
        }
      },
      {
        extends: true,
        plugins: [vue()],
        resolve: { alias: { '@renderer': resolve(__dirname, 'src/renderer/src'), '@shared': resolve(__dirname, 'src/shared') } },
        test: { name: 'renderer', include: ['test/renderer/**/*.test.ts'], environment: 'happy-dom' }
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          // Builds the renderer once; the browser files then run one at a time,
          // after the other projects, so Chromium does not share two cores with them.
          globalSetup: ['test/e2e/global-setup.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // What the window shows after an action may come well after a second on a busy machine: polls wait as long as the page's waits.
          expect: { poll: { timeout: 10_000 } }
        }
      }
    ]
  }
})
