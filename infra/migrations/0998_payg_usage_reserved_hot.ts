/**
 * Marking a pay-as-you-go request served (payg_usage.reserved_until set to NULL) rewrote the
 * row and every one of its index entries: reserved_until was in an index of its own
 * (payg_usage_reserved_idx), and an update of an indexed column is never a heap-only
 * (HOT) update. That doubled the Postgres writes of every metered request. The index goes:
 * the settler finds expired reservations among the uncharged rows
 * (payg_usage_unsettled_idx), a few at any time. A fillfactor of 90 keeps room on each page
 * for the served mark of its recent rows, so the update stays on the page. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS payg_usage_reserved_idx`.execute(db);
  await sql`ALTER TABLE payg_usage SET (fillfactor = 90)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_usage RESET (fillfactor)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS payg_usage_reserved_idx ON payg_usage (reserved_until) WHERE reserved_until IS NOT NULL`.execute(db);
}
