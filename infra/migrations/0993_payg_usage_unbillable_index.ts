/**
 * The unbillable pay-as-you-go usage as a partial index of its own rows, with the chunk,
 * so that the total `tributary status` and every /metrics scrape report is an index-only
 * scan of the few rows the chain refused for good rather than a scan of every chunk ever
 * metered (the unsettled total has payg_usage_unsettled_idx already). Frozen.
 *
 * A plain CREATE INDEX: migrations run in a transaction, where CONCURRENTLY cannot; it
 * holds off writes to payg_usage while it reads the table once.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS payg_usage_unbillable_idx ON payg_usage (chunk) WHERE unbillable_reason IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS payg_usage_unbillable_idx`.execute(db);
}
