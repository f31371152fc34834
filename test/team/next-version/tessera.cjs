#!/usr/bin/env node
// `tessera` as its next version would be: this version's command with one more
// migration, so that the upgrade tests can start a newer instance beside the
// instances of this one. The migration is added before anything reads the list.
require('tsx/cjs/api').register()
const { migrations } = require('../../../db/migrations/index.ts')
const { NEXT_MIGRATION, nextMigration } = require('./migration.ts')
migrations[NEXT_MIGRATION] = nextMigration
require('../../../src/main/cli/main.ts')
