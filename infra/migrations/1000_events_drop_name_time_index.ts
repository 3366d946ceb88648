/**
 * events_name_time_idx (name, block_time DESC) dropped: the archive writes every event
 * into each index of `events`, and this one served no read of its own. The events API
 * applies one filter mode at a time (a name or a time window, never both), so its lists
 * read events_name_slot_idx or events_time_idx; only the count route ANDs a name with a
 * time window, and that count still walks an index: events_time_idx over the window, or
 * events_name_slot_idx over the name's events, whichever the planner finds smaller.
 * Frozen.
 *
 * A plain DROP INDEX: migrations run in a transaction, where CONCURRENTLY cannot.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS events_name_time_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS events_name_time_idx ON events (name, block_time DESC)`.execute(db);
}
