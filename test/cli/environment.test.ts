import { describe, expect, it } from 'vitest'
import { CliError } from '../../src/main/cli/exit-codes'
import { ENV_NAMES, mailConfig, readEnvironment } from '../../src/main/cli/environment'

function failure(env: Record<string, string>): CliError {
  try {
    readEnvironment(ENV_NAMES, env)
  } catch (error) {
    return error as CliError
  }
  throw new Error(`accepted ${JSON.stringify(env)}`)
}

describe('the environment schema', () => {
  it('reads every variable into typed values', () => {
    const env = readEnvironment(ENV_NAMES, {
      TESSERA_DATA_DIR: '/srv/tessera',
      TESSERA_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
      TESSERA_HOST: '::1',
      TESSERA_PORT: '0',
      TESSERA_ALLOWED_HOSTS: 'vault.example.com, 10.0.0.5,[::1]',
      TESSERA_CORS_ORIGINS: 'https://shop.example.com,http://localhost:5173',
      TESSERA_BODY_LIMIT: '1048576',
      TESSERA_LOG_LEVEL: 'warn',
      TESSERA_SMTP_HOST: 'smtp.example.com',
      TESSERA_SMTP_PORT: '2525',
      TESSERA_SMTP_SECURE: 'false',
      TESSERA_SMTP_REQUIRE_TLS: 'YES',
      TESSERA_SMTP_USER: 'vault',
      TESSERA_SMTP_PASSWORD: 'hunter2',
      TESSERA_SMTP_FROM: 'Tessera <vault@example.com>',
      TESSERA_PUBLIC_URL: 'https://vault.example.com'
    })
    expect(env).toMatchObject({
      TESSERA_HOST: '::1',
      TESSERA_PORT: 0,
      TESSERA_ALLOWED_HOSTS: ['vault.example.com', '10.0.0.5', '[::1]'],
      TESSERA_CORS_ORIGINS: ['https://shop.example.com', 'http://localhost:5173'],
      TESSERA_BODY_LIMIT: 1048576,
      TESSERA_LOG_LEVEL: 'warn'
    })
    expect(mailConfig(env)).toEqual({
      host: 'smtp.example.com',
      port: 2525,
      secure: false,
      requireTLS: true,
      user: 'vault',
      password: 'hunter2',
      from: 'Tessera <vault@example.com>',
      publicBaseUrl: 'https://vault.example.com'
    })
  })

  it('treats empty variables as unset and reads only the names asked for', () => {
    expect(readEnvironment(ENV_NAMES, { TESSERA_PORT: '', TESSERA_LOG_LEVEL: '' })).toEqual({})
    expect(readEnvironment(['TESSERA_DATA_DIR'], { TESSERA_PORT: 'abc', TESSERA_DATA_DIR: '/x' })).toEqual({ TESSERA_DATA_DIR: '/x' })
    expect(mailConfig({})).toEqual({})
  })

  it.each([
    ['TESSERA_PORT', '65536'],
    ['TESSERA_PORT', '-1'],
    ['TESSERA_HOST', 'http://127.0.0.1'],
    ['TESSERA_ALLOWED_HOSTS', 'vault.example.com:8443'],
    ['TESSERA_CORS_ORIGINS', 'shop.example.com'],
    ['TESSERA_CORS_ORIGINS', 'https://shop.example.com/'],
    ['TESSERA_BODY_LIMIT', '0'],
    ['TESSERA_BODY_LIMIT', '5mb'],
    ['TESSERA_LOG_LEVEL', 'INFO'],
    ['TESSERA_SMTP_PORT', '25x'],
    ['TESSERA_SMTP_PORT', '70000'],
    ['TESSERA_SMTP_SECURE', 'maybe'],
    ['TESSERA_SMTP_FROM', 'vault@'],
    ['TESSERA_PUBLIC_URL', 'not a url'],
    ['TESSERA_PUBLIC_URL', 'javascript:alert(1)']
  ])('refuses %s=%s with a usage error naming the variable and the value', (name, value) => {
    const error = failure({ [name]: value })
    expect(error.exit).toBe('USAGE')
    expect(error.message).toMatch(new RegExp(`^${name} must `))
    expect(error.message).toContain(`(got ${JSON.stringify(value)})`)
    expect(error.hint).toContain(name)
  })

  it('never echoes a secret', () => {
    const key = failure({ TESSERA_MASTER_KEY: 'c2hvcnQ=' })
    expect(key.message).toBe('TESSERA_MASTER_KEY must be the base64 encoding of 32 bytes (make one with `openssl rand -base64 32`).')
    // A key with a character outside base64 is refused too, not silently truncated by the decoder.
    expect(failure({ TESSERA_MASTER_KEY: Buffer.alloc(32).toString('base64') + '!' }).message).not.toContain('!')
  })
})
