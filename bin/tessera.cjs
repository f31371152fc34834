#!/usr/bin/env node
// The headless `tessera` command. It runs the TypeScript sources directly, so
// `npx tessera` works right after `npm install` with no build step.
require('tsx/cjs/api').register()
require('../src/main/cli/main.ts')
