import { describe, expect, it, vi } from 'vitest'
import { IPC_CHANNELS, IPC_METHODS } from '../../src/shared/ipc'

const exposed: Record<string, any> = {}
const invoke = vi.fn(async (channel: string, ...args: unknown[]) => ({ ok: true, value: { channel, args } }))

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: vi.fn((name: string, api: unknown) => (exposed[name] = api)) },
  ipcRenderer: { invoke: (channel: string, ...args: unknown[]) => invoke(channel, ...args) }
}))

await import('../../src/preload/index')

describe('preload', () => {
  it('exposes only window.tessera', () => {
    expect(Object.keys(exposed)).toEqual(['tessera'])
  })

  it('has one function per method of the contract, and nothing else', () => {
    const bridge = exposed.tessera
    expect(Object.keys(bridge).sort()).toEqual(Object.keys(IPC_METHODS).sort())
    for (const [namespace, methods] of Object.entries(IPC_METHODS)) {
      expect(Object.keys(bridge[namespace]).sort()).toEqual([...methods].sort())
    }
    expect(Object.values(bridge).flatMap((methods) => Object.keys(methods as object))).toHaveLength(IPC_CHANNELS.length)
  })

  it('invokes the method channel with the arguments as they are', async () => {
    const result = await exposed.tessera.tokens.reveal('tok_1', 'Support ticket')
    expect(invoke).toHaveBeenCalledWith('app:tokens.reveal', 'tok_1', 'Support ticket')
    expect(result).toEqual({ ok: true, value: { channel: 'app:tokens.reveal', args: ['tok_1', 'Support ticket'] } })
  })

  it('does not hand the renderer ipcRenderer or a generic invoke', () => {
    expect(JSON.stringify(Object.keys(exposed.tessera))).not.toMatch(/invoke|send|ipc/i)
  })
})
