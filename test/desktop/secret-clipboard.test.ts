import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { memoryClipboard, SecretClipboard } from '../../src/main/desktop/secret-clipboard'

describe('SecretClipboard', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  function setUp() {
    const clipboard = memoryClipboard()
    const clear = vi.spyOn(clipboard, 'clear')
    return { clipboard, clear, secrets: new SecretClipboard(clipboard) }
  }

  it('copies the secret and clears it 30 seconds later', async () => {
    const { clipboard, secrets } = setUp()
    await secrets.copy('key_private_secret')
    expect(await clipboard.readText()).toBe('key_private_secret')
    await vi.advanceTimersByTimeAsync(29_999)
    expect(await clipboard.readText()).toBe('key_private_secret')
    await vi.advanceTimersByTimeAsync(1)
    expect(await clipboard.readText()).toBe('')
  })

  it('leaves the clipboard alone when the user copied something else meanwhile', async () => {
    const { clipboard, clear, secrets } = setUp()
    await secrets.copy('key_private_secret')
    await clipboard.writeText('a shopping list')
    await vi.advanceTimersByTimeAsync(30_000)
    expect(await clipboard.readText()).toBe('a shopping list')
    expect(clear).not.toHaveBeenCalled()
  })

  it('gives a second secret its own 30 seconds and still clears it', async () => {
    const { clipboard, secrets } = setUp()
    await secrets.copy('key_first')
    await vi.advanceTimersByTimeAsync(20_000)
    await secrets.copy('key_second')
    await vi.advanceTimersByTimeAsync(20_000)
    expect(await clipboard.readText()).toBe('key_second')
    await vi.advanceTimersByTimeAsync(10_000)
    expect(await clipboard.readText()).toBe('')
  })

  it('clears a pending secret at once on request (quit), and only once', async () => {
    const { clipboard, clear, secrets } = setUp()
    await secrets.copy('key_private_secret')
    await secrets.clearIfUnchanged()
    expect(await clipboard.readText()).toBe('')
    await clipboard.writeText('copied after quit began')
    await vi.advanceTimersByTimeAsync(30_000)
    expect(await clipboard.readText()).toBe('copied after quit began')
    expect(clear).toHaveBeenCalledTimes(1)
  })
})
