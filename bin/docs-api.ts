/** `npm run docs:api`: writes docs/api.md from the OpenAPI document. */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openApiDocument } from '../src/main/server/openapi'
import { renderApiMarkdown } from '../src/main/server/openapi-markdown'

const target = join(__dirname, '..', 'docs', 'api.md')
writeFileSync(target, renderApiMarkdown(openApiDocument()))
console.log(`Wrote ${target}`)
