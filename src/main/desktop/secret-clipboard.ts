/**
 * Copies secrets (keys, nonces, invitation links) to the system clipboard and
 * takes them off again after 30 seconds, unless something else was copied
 * since. This runs in the main process rather than the renderer: the
 * renderer's clipboard API works only while the window has focus, and 30
 * seconds after a copy the user is usually pasting in another application.
 * Electron-free: the Electron glue passes its `clipboard` module.
 */

/** The part of a system clipboard this needs (Electron's `clipboard` fits). */
export interface ClipboardPort {
  readText(): Promise<string>
  writeText(text: string): Promise<void>
  clear(): void
}

/** How long a copied secret stays on the clipboard. */
export const SECRET_CLIPBOARD_MS = 30_000

export class SecretClipboard {
  private pending: { text: string; timer: ReturnType<typeof setTimeout> } | undefined

  constructor(
    private readonly clipboard: ClipboardPort,
    private readonly holdMs = SECRET_CLIPBOARD_MS
  ) {}

  /** Puts `text` on the clipboard; clears it after the hold time if the clipboard still holds exactly that text. */
  async copy(text: string): Promise<void> {
    this.cancel()
    await this.clipboard.writeText(text)
    const timer = setTimeout(() => void this.clearIfUnchanged(), this.holdMs)
    // A pending clear must not keep the process alive; quitting clears at once instead.
    timer.unref?.()
    this.pending = { text, timer }
  }

  /** Clears a secret still on the clipboard now (on quit or lock). */
  async clearIfUnchanged(): Promise<void> {
    const pending = this.pending
    this.cancel()
    if (pending && (await this.clipboard.readText()) === pending.text) this.clipboard.clear()
  }

  private cancel(): void {
    if (this.pending) clearTimeout(this.pending.timer)
    this.pending = undefined
  }
}

/** A clipboard in memory, where there is no system clipboard (the browser tests' harness). */
export function memoryClipboard(): ClipboardPort {
  let content = ''
  return {
    readText: async () => content,
    writeText: async (text) => {
      content = text
    },
    clear: () => {
      content = ''
    }
  }
}
