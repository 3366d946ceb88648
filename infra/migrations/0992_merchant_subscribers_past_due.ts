/**
 * merchant_subscribers.past_due goes: the merchant projection never wrote it, and the
 * subscriber's past-due flag is read from the scheduler's lifecycle events
 * (subscription.past_due, not yet recovered or canceled). A column that is always false
 * would only mislead a reader of the table. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE merchant_subscribers DROP COLUMN IF EXISTS past_due`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE merchant_subscribers ADD COLUMN IF NOT EXISTS past_due boolean NOT NULL DEFAULT false`.execute(db);
}
