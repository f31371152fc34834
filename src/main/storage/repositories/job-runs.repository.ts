import { sql, type Db } from '../connections'


export interface JobRunRow {
  name: string
  last_run_at: number
}

export async function listJobRuns(db: Db): Promise<JobRunRow[]> {
  return sql(db)('job_runs').select('name', 'last_run_at')
}

export async function recordJobRun(db: Db, name: string, at: number): Promise<void> {
  await sql(db)('job_runs').insert({ name, last_run_at: at }).onConflict('name').merge()
}
