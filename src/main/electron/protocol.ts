/**
 * Serves the built renderer on `app://tessera/` instead of loading it from
 * file://. A file:// page may read any file its URL can name and shares its
 * origin with every other local file; the custom scheme gives the app one
 * origin of its own (so `'self'` in the CSP means exactly the app), serves
 * only the files of the renderer folder, and lets the file:// privileges fuse
 * stay off.
 */
import { readFile } from 'node:fs/promises'
import { extname, isAbsolute, relative, resolve, sep } from 'node:path'
import { protocol } from 'electron'
import { APP_HOST, APP_SCHEME, CONTENT_SECURITY_POLICY } from './window'

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf'
}

/**
 * Registers `app:` as a standard, secure scheme (a real origin, a secure
 * context). Electron accepts this only before the app is ready.
 */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true } }])
}

/**
 * The file inside `root` that an app:// URL names (`/` names index.html), or
 * undefined for another host, anything outside `root` however encoded
 * (`..`, `%2e%2e`, `%2f`, backslashes), or a NUL byte.
 */
export function resolveAppFile(root: string, url: string): string | undefined {
  let path: string
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== APP_HOST) return undefined
    path = decodeURIComponent(parsed.pathname)
  } catch {
    return undefined
  }
  if (path.includes('\0') || path.includes('\\')) return undefined
  const file = resolve(root, `.${path.endsWith('/') ? `${path}index.html` : path}`)
  const inside = relative(root, file)
  return inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside) ? undefined : file
}

function notFound(): Response {
  return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } })
}

/** Answers app:// requests from the files of `rendererDir`, with the CSP as a header; GET only. */
export function serveRenderer(rendererDir: string): void {
  const root = resolve(rendererDir)
  protocol.handle(APP_SCHEME, async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405 })
    const file = resolveAppFile(root, request.url)
    if (!file) return notFound()
    let body: Buffer
    try {
      body = await readFile(file)
    } catch {
      return notFound()
    }
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), {
      headers: {
        'content-type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
        'content-security-policy': CONTENT_SECURITY_POLICY,
        'x-content-type-options': 'nosniff'
      }
    })
  })
}
