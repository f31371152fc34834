/**
 * Checks HTTP responses against the OpenAPI document, so the document cannot
 * drift from what the service answers: the status must be documented for the
 * operation, the media type listed for that status, and the body valid against
 * its schema (JSON Schema 2020-12).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { openApiDocument } from '../../src/main/server/openapi'

const DOCUMENT_ID = 'tessera-openapi'

interface MediaType {
  schema?: unknown
}

interface Response {
  content?: Record<string, MediaType>
}

interface Operation {
  operationId?: string
  responses?: Record<string, Response>
}

interface Route {
  method: string
  template: string
  pattern: RegExp
  operation: Operation
}

const document = openApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> }

// `strict: false`: the document carries OpenAPI keys beside the schemas (paths, responses, …).
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema(document, DOCUMENT_ID)

function templatePattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')
  return new RegExp(`^${escaped}$`)
}

/** Every documented operation; templates with fewer parameters first, so `/applications/key` wins over `/applications/{id}`. */
const routes: Route[] = Object.entries(document.paths)
  .flatMap(([template, item]) => Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), template, pattern: templatePattern(template), operation })))
  .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))

const validators = new Map<string, ValidateFunction>()

/** The validator of the schema at `pointer` in the document, compiled once. */
function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer)
  if (!validate) validators.set(pointer, (validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer}` })))
  return validate
}

function responseSchemaPointer(route: Route, status: string, mediaType: string): string {
  const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1')
  return ['paths', route.template, route.method.toLowerCase(), 'responses', status, 'content', mediaType, 'schema'].map(escape).join('/')
}

export interface ObservedResponse {
  method: string
  /** The request path, with or without a query string. */
  url: string
  status: number
  contentType: string | null
  /** The raw body text. */
  text: string
  /** The body parsed as JSON, or the text when it is not JSON. */
  body: unknown
}

/**
 * Why `response` does not match the document, or undefined when it does.
 * Requests no operation takes (unknown paths, wrong methods) must get a
 * problem document with 401, 404 or 405.
 */
export function undocumentedResponse(response: ObservedResponse): string | undefined {
  const path = response.url.split('?', 1)[0]
  const method = response.method.toUpperCase()
  const route = routes.find((candidate) => candidate.method === method && candidate.pattern.test(path))
  const mediaType = response.contentType?.split(';', 1)[0].trim().toLowerCase() ?? ''
  if (!route) return unroutedProblem(response, mediaType)
  const name = `${route.operation.operationId} (${method} ${route.template})`
  const documented = route.operation.responses?.[String(response.status)]
  if (!documented) return `${name}: status ${response.status} is not documented (documented: ${Object.keys(route.operation.responses ?? {}).join(', ')})`
  if (!documented.content) return response.text === '' ? undefined : `${name} → ${response.status}: documented without a body, but one was sent`
  if (!documented.content[mediaType]) {
    return `${name} → ${response.status}: content type ${response.contentType} is not documented (documented: ${Object.keys(documented.content).join(', ')})`
  }
  const validate = validatorAt(responseSchemaPointer(route, String(response.status), mediaType))
  if (validate(mediaType.endsWith('json') ? response.body : response.text)) return undefined
  return `${name} → ${response.status} ${mediaType}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`
}

function unroutedProblem(response: ObservedResponse, mediaType: string): string | undefined {
  const name = `${response.method} ${response.url} (no such operation)`
  if (![401, 404, 405].includes(response.status)) return `${name}: status ${response.status} instead of 401, 404 or 405`
  if (mediaType !== 'application/problem+json') return `${name} → ${response.status}: content type ${response.contentType} instead of application/problem+json`
  const validate = validatorAt('components/schemas/Problem')
  return validate(response.body) ? undefined : `${name} → ${response.status}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`
}
