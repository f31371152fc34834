import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

const electron = vi.hoisted(() => ({
  privileged: [] as unknown[],
  handlers: new Map<string, (request: Request) => Promise<Response>>()
}))

vi.mock('electron', () => ({
  protocol: {
    registerSchemesAsPrivileged: vi.fn((schemes: unknown[]) => electron.privileged.push(...schemes)),
    handle: vi.fn((scheme: string, handler: (request: Request) => Promise<Response>) => electron.handlers.set(scheme, handler))
  },
  BrowserWindow: class {},
  nativeTheme: { shouldUseDarkColors: false }
}))

const { registerAppScheme, resolveAppFile, serveRenderer } = await import('../../src/main/electron/protocol')
const { CONTENT_SECURITY_POLICY } = await import('../../src/main/electron/window')

describe('the app:// protocol', () => {
  let root: string
  let rendererDir: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tessera-protocol-'))
    rendererDir = join(root, 'renderer')
    await mkdir(join(rendererDir, 'assets'), { recursive: true })
    await writeFile(join(rendererDir, 'index.html'), '<!doctype html><title>Tessera</title>')
    await writeFile(join(rendererDir, 'assets', 'index-abc.js'), 'console.log(1)')
    // Beside the renderer, with a name that starts like it: must stay unreachable.
    await mkdir(join(root, 'renderer-secrets'))
    await writeFile(join(root, 'renderer-secrets', 'key.txt'), 'master key')
    await writeFile(join(root, 'master.key'), 'master key')
    registerAppScheme()
    serveRenderer(rendererDir)
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  const fetchApp = (url: string, method = 'GET') => electron.handlers.get('app')!(new Request(url, { method }))

  it('registers app: as a standard, secure scheme before the app is ready', () => {
    expect(electron.privileged).toEqual([{ scheme: 'app', privileges: { standard: true, secure: true } }])
  })

  it('serves the renderer files with their content type and the CSP header', async () => {
    const page = await fetchApp('app://tessera/index.html')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await page.text()).toContain('<title>Tessera</title>')
    const script = await fetchApp('app://tessera/assets/index-abc.js')
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await script.text()).toBe('console.log(1)')
    expect(await (await fetchApp('app://tessera/')).text()).toContain('<title>Tessera</title>')
    expect(await (await fetchApp('app://tessera/index.html?x=1#/tokens')).text()).toContain('<title>Tessera</title>')
  })

  it('refuses every path outside the renderer folder, however it is encoded, with a 404', async () => {
    for (const url of [
      'app://tessera/../master.key',
      'app://tessera/%2e%2e/master.key',
      'app://tessera/..%2fmaster.key',
      'app://tessera/assets/..%2f..%2fmaster.key',
      'app://tessera/%2e%2e%2frenderer-secrets%2fkey.txt',
      'app://tessera/..%5cmaster.key',
      'app://tessera/assets%5c..%5c..%5cmaster.key',
      'app://tessera/index.html%00.js',
      'app://tessera/%E0%A4%A',
      `app://tessera/${encodeURIComponent(join(root, 'master.key'))}`,
      'app://tessera/missing.js',
      'app://other/index.html'
    ]) {
      const response = await fetchApp(url)
      expect(response.status, url).toBe(404)
      expect(await response.text(), url).not.toContain('master key')
    }
  })

  it('answers only GET and HEAD', async () => {
    expect((await fetchApp('app://tessera/index.html', 'HEAD')).status).toBe(200)
    expect((await fetchApp('app://tessera/index.html', 'POST')).status).toBe(405)
  })

  it('resolves names only inside the root', () => {
    expect(resolveAppFile('/app/renderer', 'app://tessera/assets/a.js')).toBe(join('/app/renderer', 'assets', 'a.js'))
    expect(resolveAppFile('/app/renderer', 'app://tessera/%2e%2e%2frenderer2/a.js')).toBeUndefined()
    expect(resolveAppFile('/app/renderer', 'not a url')).toBeUndefined()
    expect(resolveAppFile('/app/renderer', 'file:///app/renderer/index.html')).toBeUndefined()
  })
})
