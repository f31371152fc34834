/**
 * Electron's `safeStorage` for tests of the desktop's team connection, where
 * the OS keychain cannot run: a stand-in cipher, reversible, whose output
 * never contains its input. Used as `vi.mock('electron', …)`'s module.
 */
import { vi } from 'vitest'

export function electronWithStandInKeychain() {
  return {
    safeStorage: {
      isAsyncEncryptionAvailable: vi.fn(async () => true),
      getSelectedStorageBackend: vi.fn(() => 'gnome_libsecret'),
      encryptStringAsync: vi.fn(async (text: string) => Buffer.from(`os:${Buffer.from(text).toString('hex')}`)),
      decryptStringAsync: vi.fn(async (buffer: Buffer) => ({ result: Buffer.from(buffer.toString().slice(3), 'hex').toString(), shouldReEncrypt: false }))
    }
  }
}
