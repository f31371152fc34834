import { describe, expect, it } from 'vitest'
import type { AccessRule, Permission } from '../../src/shared/types'
import {
  holdsPermission,
  requirePermission,
  requireTokenAccess,
  ruleMatches,
  grantBeyond,
  transformWithin,
  transformFor,
  visibleTokens,
  type AccessTarget
} from '../../src/main/domain/access'
import type { Actor } from '../../src/main/domain/actor'
import { ForbiddenError } from '../../src/main/domain/errors'

function actor(grant: { permissions?: Permission[]; rules?: AccessRule[]; isMember?: boolean } = {}): Actor {
  return {
    type: grant.isMember ? 'user' : 'application',
    id: 'actor-1',
    tenantId: 'tenant-1',
    applicationType: grant.isMember ? undefined : 'private',
    permissions: grant.permissions ?? [],
    rules: grant.rules ?? [],
    isMember: grant.isMember
  }
}

const pciToken: AccessTarget = { id: 'tok_4242', containers: ['/pci/high/'] }
const generalToken: AccessTarget = { id: 'tok_general', containers: ['/general/high/'] }

describe('ruleMatches', () => {
  const rule = (extra: Partial<AccessRule>): AccessRule => ({ priority: 1, transform: 'mask', permissions: ['token:read'], ...extra })

  it('matches a token in a container below the rule container', () => {
    expect(ruleMatches(rule({ container: '/pci/' }), pciToken)).toBe(true)
    expect(ruleMatches(rule({ container: '/pci/high/' }), pciToken)).toBe(true)
    expect(ruleMatches(rule({ container: '/' }), generalToken)).toBe(true)
  })

  it('does not match a token outside the rule container', () => {
    expect(ruleMatches(rule({ container: '/pci/' }), generalToken)).toBe(false)
    expect(ruleMatches(rule({ container: '/pci/low/' }), pciToken)).toBe(false)
  })

  it('does not treat a container as a prefix of a sibling with a longer name', () => {
    expect(ruleMatches(rule({ container: '/pci/' }), { id: 'x', containers: ['/pcix/high/'] })).toBe(false)
  })

  it('matches when any one of the token containers is covered', () => {
    expect(ruleMatches(rule({ container: '/pci/' }), { id: 'x', containers: ['/general/', '/pci/low/'] })).toBe(true)
  })

  it('compares an id condition with equals or starts_with', () => {
    expect(ruleMatches(rule({ conditions: [{ attribute: 'id', operator: 'equals', value: 'tok_4242' }] }), pciToken)).toBe(true)
    expect(ruleMatches(rule({ conditions: [{ attribute: 'id', operator: 'equals', value: 'tok_' }] }), pciToken)).toBe(false)
    expect(ruleMatches(rule({ conditions: [{ attribute: 'id', operator: 'starts_with', value: 'tok_' }] }), pciToken)).toBe(true)
    expect(ruleMatches(rule({ conditions: [{ attribute: 'id', operator: 'starts_with', value: 'card_' }] }), pciToken)).toBe(false)
  })

  it('compares a container condition with any of the token containers', () => {
    expect(ruleMatches(rule({ conditions: [{ attribute: 'container', operator: 'equals', value: '/pci/high/' }] }), pciToken)).toBe(true)
    expect(ruleMatches(rule({ conditions: [{ attribute: 'container', operator: 'equals', value: '/pci/' }] }), pciToken)).toBe(false)
    expect(ruleMatches(rule({ conditions: [{ attribute: 'container', operator: 'starts_with', value: '/pci/' }] }), pciToken)).toBe(true)
  })

  it('requires every condition to hold', () => {
    const both = rule({
      conditions: [
        { attribute: 'id', operator: 'starts_with', value: 'tok_' },
        { attribute: 'container', operator: 'starts_with', value: '/pci/' }
      ]
    })
    expect(ruleMatches(both, pciToken)).toBe(true)
    expect(ruleMatches(both, generalToken)).toBe(false)
    expect(ruleMatches(both, { id: 'other', containers: ['/pci/high/'] })).toBe(false)
  })

  it('matches nothing without a container or conditions', () => {
    expect(ruleMatches(rule({}), pciToken)).toBe(false)
    expect(ruleMatches(rule({ conditions: [] }), pciToken)).toBe(false)
  })
})

describe('transformFor', () => {
  it('lets the rule with the lowest priority number decide, whatever the order given', () => {
    const rules: AccessRule[] = [
      { priority: 5, container: '/', transform: 'reveal', permissions: ['token:read'] },
      { priority: 1, container: '/pci/', transform: 'redact', permissions: ['token:read'] },
      { priority: 3, container: '/pci/high/', transform: 'mask', permissions: ['token:read'] }
    ]
    expect(transformFor(actor({ rules }), 'token:read', pciToken)).toBe('redact')
    expect(transformFor(actor({ rules }), 'token:read', generalToken)).toBe('reveal')
  })

  it('skips rules that do not grant the permission', () => {
    const rules: AccessRule[] = [
      { priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:create'] },
      { priority: 2, container: '/pci/', transform: 'mask', permissions: ['token:read'] }
    ]
    expect(transformFor(actor({ rules }), 'token:read', pciToken)).toBe('mask')
    expect(transformFor(actor({ rules }), 'token:create', pciToken)).toBe('reveal')
    expect(transformFor(actor({ rules }), 'token:delete', pciToken)).toBeUndefined()
  })

  it('skips rules whose container does not cover the token', () => {
    const rules: AccessRule[] = [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }]
    expect(transformFor(actor({ rules }), 'token:read', generalToken)).toBeUndefined()
  })

  it('falls back to plain permissions after every rule, masking reads', () => {
    const rules: AccessRule[] = [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }]
    const grantee = actor({ permissions: ['token:read', 'token:create', 'token:update', 'token:search'], rules })
    expect(transformFor(grantee, 'token:read', pciToken)).toBe('reveal')
    expect(transformFor(grantee, 'token:read', generalToken)).toBe('mask')
    expect(transformFor(grantee, 'token:create', generalToken)).toBe('mask')
    expect(transformFor(grantee, 'token:update', generalToken)).toBe('mask')
    expect(transformFor(grantee, 'token:search', generalToken)).toBe('mask')
  })

  it('reveals through the plain token:use permission', () => {
    expect(transformFor(actor({ permissions: ['token:use'] }), 'token:use', pciToken)).toBe('reveal')
  })

  it('lets a rule narrow what a plain permission would give', () => {
    const rules: AccessRule[] = [{ priority: 1, container: '/pci/', transform: 'redact', permissions: ['token:use'] }]
    expect(transformFor(actor({ permissions: ['token:use'], rules }), 'token:use', pciToken)).toBe('redact')
  })

  it('gives members masked access for reading, creating, updating and searching', () => {
    const member = actor({ isMember: true })
    for (const permission of ['token:read', 'token:create', 'token:update', 'token:search', 'token:delete'] as const) {
      expect(transformFor(member, permission, pciToken)).toBe('mask')
    }
  })
})

describe('requireTokenAccess', () => {
  it('returns the transform when granted', () => {
    expect(requireTokenAccess(actor({ permissions: ['token:read'] }), 'token:read', pciToken)).toBe('mask')
  })

  it('throws a 403 when nothing grants the permission on the token', () => {
    const rules: AccessRule[] = [{ priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:read'] }]
    expect(() => requireTokenAccess(actor({ rules }), 'token:read', pciToken)).toThrow(ForbiddenError)
  })
})

describe('holdsPermission and requirePermission', () => {
  it('counts a permission held through a rule as held', () => {
    const rules: AccessRule[] = [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] }]
    expect(holdsPermission(actor({ rules }), 'token:read')).toBe(true)
    expect(holdsPermission(actor({ rules }), 'token:delete')).toBe(false)
    expect(holdsPermission(actor({ isMember: true }), 'tenant:update')).toBe(true)
  })

  it('requires plain permissions for non-token operations', () => {
    expect(() => requirePermission(actor({ permissions: ['log:read'] }), 'log:read')).not.toThrow()
    expect(() => requirePermission(actor({ permissions: ['log:read'] }), 'log:read', 'application:read')).toThrow(ForbiddenError)
    expect(() => requirePermission(actor({ isMember: true }), 'tenant:member:delete')).not.toThrow()
  })
})

describe('visibleTokens', () => {
  it('does not restrict a plain permission or a member', () => {
    expect(visibleTokens(actor({ permissions: ['token:read'] }), 'token:read')).toBeUndefined()
    expect(visibleTokens(actor({ isMember: true }), 'token:read')).toBeUndefined()
  })

  it('otherwise is one clause per rule granting the permission: its container, or its conditions', () => {
    const rules: AccessRule[] = [
      { priority: 4, container: '/bank/', transform: 'mask', permissions: ['token:read'] },
      { priority: 2, container: '/pci/', transform: 'reveal', permissions: ['token:read', 'token:search'] },
      { priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:create'] }
    ]
    const within = (value: string) => [{ attribute: 'container', operator: 'starts_with', value }]
    expect(visibleTokens(actor({ rules }), 'token:read')).toEqual([within('/bank/'), within('/pci/')])
    expect(visibleTokens(actor({ rules }), 'token:search')).toEqual([within('/pci/')])
    const conditions = [{ attribute: 'id', operator: 'equals', value: 'tok_1' }] as const
    expect(visibleTokens(actor({ rules: [{ priority: 1, conditions: [...conditions], transform: 'mask', permissions: ['token:read'] }] }), 'token:read')).toEqual([conditions])
  })

  it('is no clause (no token) for an actor holding nothing, or only rules that match nothing', () => {
    expect(visibleTokens(actor(), 'token:read')).toEqual([])
    expect(visibleTokens(actor({ rules: [{ priority: 1, conditions: [], transform: 'mask', permissions: ['token:read'] }] }), 'token:read')).toEqual([])
  })
})

describe('grantBeyond (what a session grant would give beyond its application)', () => {
  const read = (extra: Partial<AccessRule>): AccessRule => ({ priority: 1, transform: 'reveal', permissions: ['token:read'], ...extra })
  const grant = (rules: AccessRule[], permissions: Permission[] = []) => ({ permissions, rules })

  it('allows what the application holds, plainly or through a covering rule', () => {
    const app = actor({ permissions: ['token:read', 'token:use'], rules: [read({ container: '/pci/' })] })
    expect(grantBeyond(app, grant([], ['token:read', 'token:use']))).toEqual([])
    expect(grantBeyond(app, grant([read({ container: '/pci/high/' })]))).toEqual([])
    expect(grantBeyond(app, grant([read({ conditions: [{ attribute: 'container', operator: 'equals', value: '/pci/high/' }] })]))).toEqual([])
    expect(grantBeyond(app, grant([read({ container: '/general/', transform: 'mask' })]))).toEqual([])
  })

  it('refuses a transform the application holds only on other containers', () => {
    // Reveals /pci/, masks everything else: revealing /general/ through a session would be an escalation.
    const app = actor({ permissions: ['token:read'], rules: [read({ container: '/pci/' })] })
    expect(grantBeyond(app, grant([read({ container: '/general/' })]))).toEqual(['token:read with reveal'])
    expect(grantBeyond(app, grant([read({ container: '/' })]))).toEqual(['token:read with reveal'])
  })

  it('refuses where an earlier, weaker rule of the application could decide a token in several containers', () => {
    const app = actor({ rules: [read({ priority: 1, container: '/pci/', transform: 'mask' }), read({ priority: 2, container: '/general/' })] })
    expect(grantBeyond(app, grant([read({ container: '/general/' })]))).toEqual(['token:read with reveal'])
    expect(grantBeyond(app, grant([read({ container: '/general/', transform: 'mask' })]))).toEqual([])
  })

  it('refuses a plain permission when the application holds it only on some containers', () => {
    const app = actor({ rules: [read({ container: '/general/', transform: 'mask' })] })
    expect(grantBeyond(app, grant([], ['token:read']))).toEqual(['token:read with mask'])
  })

  it('counts a rule on / as covering every token, whatever the session rule names', () => {
    const app = actor({ rules: [read({ container: '/' })] })
    expect(grantBeyond(app, grant([read({ conditions: [{ attribute: 'id', operator: 'equals', value: 'tok_1' }] })]))).toEqual([])
  })

  it('follows id conditions: a narrower id is covered, another id is not', () => {
    const app = actor({ rules: [read({ conditions: [{ attribute: 'id', operator: 'starts_with', value: 'tok_' }] })] })
    expect(grantBeyond(app, grant([read({ conditions: [{ attribute: 'id', operator: 'equals', value: 'tok_1' }] })]))).toEqual([])
    expect(grantBeyond(app, grant([read({ conditions: [{ attribute: 'id', operator: 'equals', value: 'other' }] })]))).toEqual(['token:read with reveal'])
  })

  it('names a permission the application lacks altogether', () => {
    expect(grantBeyond(actor({ permissions: ['token:create'] }), grant([], ['token:delete', 'token:create']))).toEqual(['token:delete'])
  })
})

describe('transformWithin', () => {
  it('orders transforms redact < mask < reveal', () => {
    expect(transformWithin('redact', 'mask')).toBe(true)
    expect(transformWithin('mask', 'mask')).toBe(true)
    expect(transformWithin('reveal', 'mask')).toBe(false)
  })
})
