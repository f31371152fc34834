/**
 * Tenant keys: the tables with rows per token or per audit entry hold a
 * tenant's small integer key (`tenants.tenant_key`, one or two bytes on disk)
 * where they held its 36-character UUID, in every row and index. The UUID
 * stays the tenant's public id; this is the one place that maps one to the
 * other, from a cache loaded when the database opens and kept up to date as
 * tenants are added (tenants are never deleted or renumbered).
 */
import type { Knex } from 'knex'
import { sql, type Db } from './connections'

export class TenantKeys {
  private readonly keys = new Map<string, number>()
  private readonly ids = new Map<number, string>()

  add(id: string, key: number): void {
    this.keys.set(id, key)
    this.ids.set(key, id)
  }

  /** The key of a tenant of this database. */
  keyOf(id: string): number {
    const key = this.keys.get(id)
    if (key === undefined) throw new Error(`No tenant ${id} in this vault`)
    return key
  }

  /** The public id of the tenant a stored key stands for. */
  idOf(key: number | string): string {
    const id = this.ids.get(Number(key))
    if (id === undefined) throw new Error(`No tenant with key ${key} in this vault`)
    return id
  }
}

/** By the configuration object of a knex instance, which its transactions share. */
const registries = new WeakMap<object, TenantKeys>()

/** Reads the tenants' keys and makes them the cache of `knexes` (the writer and readers of one database). */
export async function loadTenantKeys(...knexes: Knex[]): Promise<TenantKeys> {
  const keys = new TenantKeys()
  const rows: { id: string; tenant_key: number }[] = await knexes[0]('tenants').select('id', 'tenant_key')
  for (const row of rows) keys.add(row.id, Number(row.tenant_key))
  for (const knex of knexes) registries.set(knex.client.config, keys)
  return keys
}

/** The tenant keys of the database behind a handle. */
export function tenantKeys(db: Db | Knex): TenantKeys {
  const keys = registries.get(sql(db as Db).client.config)
  if (!keys) throw new Error('The tenant keys of this database were not loaded')
  return keys
}
