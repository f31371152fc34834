#!/usr/bin/env node
// Runs a TypeScript entry point of this repository in plain Node (no build step).
require('tsx/cjs/api').register()
const { resolve } = require('node:path')
const entry = process.argv[2]
process.argv.splice(1, 2, resolve(entry))
require(resolve(entry))
