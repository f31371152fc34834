/** The audit log: listing entries and the entity types they name. */
import { z } from 'zod'
import { isoDateText, pageOf, pageQuery, timestamp } from './common'
import { withoutNul } from './fields'

const isoDate = (field: string) => isoDateText(`${field} must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC`, `${field} `).optional()

/** What `start_date` and `end_date` take (readIsoDate). */
const DATE_FORMS =
  'ISO 8601: a date (`2026-11-01`, midnight UTC) or a date-time with `Z` or an offset (`2026-11-01T12:00:00Z`, `2026-11-01T13:00:00+01:00`); a date-time without either, or a day that does not exist (`2026-02-30`), is a 400'

/** `GET /logs`: newest first, within a half-open date range. */
export const listLogsQuery = z.strictObject({
  entity_type: withoutNul(z.string().max(50)).optional().meta({ description: 'Only entries about this entity type (see `GET /logs/entity-types`)' }),
  entity_id: withoutNul(z.string().max(400)).optional().meta({ description: 'Only entries about this entity' }),
  start_date: isoDate('start_date').meta({ description: `${DATE_FORMS}; keeps entries created at or after it` }),
  end_date: isoDate('end_date').meta({ description: `${DATE_FORMS}; keeps entries created before it` }),
  ...pageQuery()
})

export type ListLogsQuery = z.infer<typeof listLogsQuery>

/** The filters of `GET /logs`, which the desktop's activity chart and export take too. */
export const logFiltersQuery = listLogsQuery.omit({ page: true, size: true })

export type LogFilters = z.infer<typeof logFiltersQuery>

/** The desktop's "Archive now": the entries created before this ISO 8601 date or time (epoch ms once parsed). */
export const archiveBefore = z.string().max(40).pipe(isoDateText('must be an ISO 8601 date from 0000-01-01 to 9999-12-31 in UTC, such as 2026-11-01'))

/** The desktop's activity chart: at most this many periods per call. */
export const MAX_ACTIVITY_PERIODS = 62

/** The periods of the desktop's activity chart: `[start, end)` in epoch ms. */
export const activityPeriods = z
  .array(z.tuple([z.number().int().min(0), z.number().int().min(0)]).refine(([start, end]) => start < end, 'must start before it ends'))
  .max(MAX_ACTIVITY_PERIODS)

export type ActivityPeriods = z.infer<typeof activityPeriods>

export const logEntry = z
  .strictObject({
    tenant_id: z.uuid(),
    actor_id: z.uuid().optional().meta({ description: 'Absent for system actions such as expiry' }),
    actor_type: z.string().optional().meta({ enum: ['application', 'session', 'user'] }),
    entity_type: z.string().meta({ description: 'A token’s type for tokens; see `GET /logs/entity-types`' }),
    entity_id: z.string(),
    operation: z.string().meta({ examples: ['create', 'read', 'update', 'delete'] }),
    message: z.string(),
    created_at: timestamp,
    count: z.number().int().min(1).optional().meta({ description: 'How many events an aggregated entry stands for (refused requests); absent for one' }),
    trace_id: z
      .string()
      .optional()
      .meta({
        description:
          'The `BT-TRACE-ID` of the REST request that wrote the entry (the one sent, or the one generated and returned); for an aggregated entry, its first request’s. Absent for desktop, CLI and system actions'
      })
  })
  .meta({ id: 'LogEntry' })

export const logPage = pageOf(logEntry, 'LogPage')

export const entityType = z
  .strictObject({ display_name: z.string(), value: z.string().meta({ description: 'What log entries carry in `entity_type`' }) })
  .meta({ id: 'EntityType' })

export const entityTypeList = z.array(entityType).meta({ id: 'EntityTypeList' })
