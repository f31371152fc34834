import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // API tests start real servers and SQLite files; two cores is all we have.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000
  }
})
