import { afterEach, describe, expect, it, vi } from 'vitest'
import setup from './global-setup'
import { chromiumMissingNotice } from './support/browser'

const nowhere = () => false

describe('the line printed when the browser tests are skipped', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
    vi.restoreAllMocks()
  })

  it('names the missing Chromium and how to get it, on one line', () => {
    const notice = chromiumMissingNotice({ CHROMIUM_PATH: '/opt/none/chromium' }, nowhere)!
    expect(notice).toContain('Browser tests skipped')
    expect(notice).toContain('/opt/none/chromium')
    expect(notice).toContain('sudo apt-get install chromium')
    expect(notice).toContain('CHROMIUM_PATH')
    expect(notice).not.toMatch(/\n/)
  })

  it("looks for Debian's chromium unless CHROMIUM_PATH says otherwise", () => {
    const looked: string[] = []
    const notice = chromiumMissingNotice({}, (path) => (looked.push(path), false))
    expect(looked).toEqual(['/usr/bin/chromium'])
    expect(notice).toContain('/usr/bin/chromium')
  })

  it('says nothing when Chromium is there, or in CI where the tests must run (and fail without it)', () => {
    expect(chromiumMissingNotice({ CHROMIUM_PATH: process.execPath })).toBeUndefined()
    expect(chromiumMissingNotice({ CI: 'true', CHROMIUM_PATH: '/opt/none/chromium' }, nowhere)).toBeUndefined()
  })

  it('is printed once by the browser tests set-up, which then builds nothing', async () => {
    vi.stubEnv('CI', '')
    vi.stubEnv('CHROMIUM_PATH', '/opt/none/chromium')
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
    await setup()
    expect(warn.mock.calls).toEqual([[chromiumMissingNotice()]])
    expect(warn.mock.calls[0][0]).toContain('/opt/none/chromium')
    expect(log).not.toHaveBeenCalled()
  })
})
