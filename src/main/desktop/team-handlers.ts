/**
 * The IPC handler table on a team vault: the same channels as the embedded
 * vault's (handlers.ts), each answered by calling the team server's REST
 * interface. Token channels use the desktop's private application key, the
 * others the management key. What only exists for the embedded vault (its
 * file, master key, settings, key ceremonies, archive and outbox) is a 409
 * `not_on_team_vault` problem: those are the server's, run with the CLI there.
 * Arguments are parsed with the same schemas as the embedded table, so a bad
 * field is named before anything is sent.
 */
import { z } from 'zod'
import * as contract from '../../shared/contracts'
import type { VaultStatus, TeamVaultConnection } from '../../shared/ipc'
import type { Application, ApplicationKey, EntityType, LogEntry, Page, Session, TenantInvitation, TenantMember, Token, Webhook, WebhookDelivery } from '../../shared/types'
import { NotOnTeamVaultError, ValidationError } from '../app'
import { body, DOT_SEGMENT_REFUSED, id, isDotSegment, method, none } from './handler-method'
import type { DesktopHandlers } from './handler-method'
import type { Query, TeamClient } from './team-client'

/** The server's clients and what the window shows of the connection. */
export interface TeamSession {
  /** Calls with the management key. */
  management: TeamClient
  /** Calls with the desktop's private application key (token permissions). */
  tokens: TeamClient
  /** The id of that private application, deleted again on disconnect. */
  applicationId: string
  info: TeamVaultConnection
  /** Asks the server again when it was unreachable (throttled); the status polls call it. */
  revalidate(): void
}

/** The channels the table answers; `connection` and `clipboard` stay local. */
export type TeamHandlers = Omit<DesktopHandlers, 'connection' | 'clipboard'>

/** The export's and `GET /logs`' limits, as the embedded vault's. */
const MAX_EXPORT_ENTRIES = 10_000
const LOG_PAGE_SIZE = 100

/**
 * A REST path of encoded segments. `.` and `..` pass encodeURIComponent unchanged and the URL
 * would drop them, turning the call into another operation: refused here too, should an id
 * ever reach this without the `id` schema.
 */
function path(...segments: string[]): string {
  if (segments.some(isDotSegment)) throw ValidationError.field('id', DOT_SEGMENT_REFUSED)
  return segments.map((segment) => `/${encodeURIComponent(segment)}`).join('')
}

const unavailable = (what: string) => async (): Promise<never> => {
  throw new NotOnTeamVaultError(what)
}

function tokenSearch(query: contract.ListTokensQuery): Query {
  const metadata = Object.fromEntries(Object.entries(query.metadata).map(([key, value]) => [`metadata.${key}`, value]))
  return { id: query.id, type: query.type, page: query.page, size: query.size, ...metadata }
}

const isoOf = (epochMs: number | undefined) => (epochMs === undefined ? undefined : new Date(epochMs).toISOString())

function logSearch(filters: contract.LogFilters, page?: { page: number; size: number }): Query {
  return { entity_type: filters.entity_type, entity_id: filters.entity_id, start_date: isoOf(filters.start_date), end_date: isoOf(filters.end_date), ...page }
}

/** Entries per period: one counted page of `GET /logs` per period, within the filters' own dates. */
async function countByPeriod(client: TeamClient, filters: contract.LogFilters, periods: contract.ActivityPeriods): Promise<number[]> {
  const counts: number[] = []
  for (const [start, end] of periods) {
    const from = Math.max(start, filters.start_date ?? start)
    const to = Math.min(end, filters.end_date ?? end)
    if (from >= to) {
      counts.push(0)
      continue
    }
    const page = await client.get<Page<LogEntry>>('/logs', logSearch({ ...filters, start_date: from, end_date: to }, { page: 1, size: 1 }))
    counts.push(page.pagination.total_items)
  }
  return counts
}

/**
 * Every entry matching the filters, newest first, up to 10,000: `GET /logs` page by page.
 * The end is pinned to when the export starts, so the reads it logs itself do not shift the pages.
 */
async function exportLogs(client: TeamClient, filters: contract.LogFilters): Promise<LogEntry[]> {
  const pinned = { ...filters, end_date: Math.min(filters.end_date ?? Date.now(), Date.now()) }
  const entries: LogEntry[] = []
  for (let page = 1; entries.length < MAX_EXPORT_ENTRIES; page++) {
    const { data } = await client.get<Page<LogEntry>>('/logs', logSearch(pinned, { page, size: LOG_PAGE_SIZE }))
    entries.push(...data)
    if (data.length < LOG_PAGE_SIZE) break
  }
  return entries.slice(0, MAX_EXPORT_ENTRIES)
}

export function createTeamHandlers(session: TeamSession, embeddedStatus: () => Promise<VaultStatus>): TeamHandlers {
  const { management, tokens } = session
  /**
   * The window's status on a team vault: open, with the connection. The embedded vault's own fields stay as
   * they are, but not its idle lock's countdown, which does not apply to the team vault.
   */
  const status = async (): Promise<VaultStatus> => {
    session.revalidate()
    const embedded: VaultStatus = { ...(await embeddedStatus()), state: 'unlocked', team: session.info }
    delete embedded.idleLock
    return embedded
  }

  return {
    vault: {
      status: method(none, status),
      create: unavailable('Creating a vault'),
      unlock: unavailable('Unlocking'),
      lock: unavailable('Locking'),
      reportActivity: method(none, status)
    },
    settings: {
      get: unavailable('Desktop settings'),
      update: unavailable('Desktop settings')
    },
    tokens: {
      list: method(z.tuple([contract.listTokensQuery]), ([query]) => tokens.get<Page<Token>>('/tokens', tokenSearch(query))),
      get: method(z.tuple([id]), ([tokenId]) => tokens.get<Token>(path('tokens', tokenId))),
      create: method(z.tuple([body]), ([request]) => tokens.post<Token>('/tokens', request)),
      update: method(z.tuple([id, body]), ([tokenId, patch]) => tokens.patch<Token>(path('tokens', tokenId), patch)),
      delete: method(z.tuple([id]), ([tokenId]) => tokens.delete(path('tokens', tokenId))),
      reveal: unavailable('Revealing a token with a logged reason')
    },
    tokenize: {
      run: method(z.tuple([z.unknown()]), ([request]) => tokens.post<unknown>('/tokenize', request))
    },
    logs: {
      list: method(z.tuple([contract.listLogsQuery]), ([query]) => management.get<Page<LogEntry>>('/logs', logSearch(query, { page: query.page, size: query.size }))),
      entityTypes: method(none, () => management.get<EntityType[]>('/logs/entity-types')),
      activity: method(z.tuple([contract.logFiltersQuery, contract.activityPeriods]), ([query, periods]) => countByPeriod(management, query, periods)),
      export: method(z.tuple([contract.logFiltersQuery]), ([query]) => exportLogs(management, query)),
      archive: unavailable('Archiving the audit log'),
      archiveStatus: unavailable('The audit archive')
    },
    applications: {
      list: method(z.tuple([contract.listApplicationsQuery]), ([query]) => management.get<Page<Application>>('/applications', query)),
      get: method(z.tuple([id]), ([applicationId]) => management.get<Application>(path('applications', applicationId))),
      create: method(z.tuple([body]), ([request]) => management.post<Application>('/applications', request)),
      update: method(z.tuple([id, body]), ([applicationId, request]) => management.put<Application>(path('applications', applicationId), request)),
      regenerate: method(z.tuple([id]), ([applicationId]) => management.post<Application>(path('applications', applicationId, 'regenerate'))),
      delete: method(z.tuple([id]), ([applicationId]) => management.delete(path('applications', applicationId))),
      listKeys: method(z.tuple([id]), ([applicationId]) => management.get<ApplicationKey[]>(path('applications', applicationId, 'keys'))),
      createKey: method(z.tuple([id]), ([applicationId]) => management.post<ApplicationKey>(path('applications', applicationId, 'keys'))),
      deleteKey: method(z.tuple([id, id]), ([applicationId, keyId]) => management.delete(path('applications', applicationId, 'keys', keyId)))
    },
    sessions: {
      create: unavailable('Creating a test session as another application'),
      authorize: unavailable('Authorizing a test session as another application'),
      list: method(z.tuple([contract.listSessionsQuery]), ([query]) => management.get<Page<Session>>('/sessions', query)),
      revoke: method(z.tuple([id]), ([sessionId]) => management.delete(path('sessions', sessionId)))
    },
    members: {
      list: method(z.tuple([contract.listMembersQuery]), ([query]) => management.get<Page<TenantMember>>('/tenants/self/members', query)),
      delete: method(z.tuple([id]), ([memberId]) => management.delete(path('tenants', 'self', 'members', memberId)))
    },
    invitations: {
      list: method(z.tuple([contract.listInvitationsQuery]), ([query]) => management.get<Page<TenantInvitation>>('/tenants/self/invitations', query)),
      create: method(z.tuple([body]), ([request]) => management.post<TenantInvitation>('/tenants/self/invitations', request)),
      resend: method(z.tuple([id]), ([invitationId]) => management.post<TenantInvitation>(path('tenants', 'self', 'invitations', invitationId, 'resend'))),
      delete: method(z.tuple([id]), ([invitationId]) => management.delete(path('tenants', 'self', 'invitations', invitationId)))
    },
    outbox: {
      list: unavailable('The mail outbox')
    },
    webhooks: {
      list: method(z.tuple([contract.listWebhooksQuery]), ([query]) => management.get<Page<Webhook>>('/webhooks', query)),
      get: method(z.tuple([id]), ([webhookId]) => management.get<Webhook>(path('webhooks', webhookId))),
      create: method(z.tuple([body]), ([request]) => management.post<Webhook>('/webhooks', request)),
      update: method(z.tuple([id, body]), ([webhookId, request]) => management.put<Webhook>(path('webhooks', webhookId), request)),
      delete: method(z.tuple([id]), ([webhookId]) => management.delete(path('webhooks', webhookId))),
      eventTypes: method(none, () => management.get<string[]>('/webhooks/event-types')),
      deliveries: method(z.tuple([id, contract.listWebhookDeliveriesQuery]), ([webhookId, query]) =>
        management.get<Page<WebhookDelivery>>(path('webhooks', webhookId, 'deliveries'), query)
      )
    },
    keys: {
      status: unavailable('Key management'),
      rotate: unavailable('Rotating the data key'),
      retire: unavailable('Retiring a data-key version'),
      report: unavailable('Key retirement reports'),
      rotateMaster: unavailable('Rotating the master key')
    }
  }
}
