/**
 * payg_usage.user_payment: the payer's account (its user payment, which names the token
 * account and holds the delegation) a chunk draws on. Several pay-as-you-go policies, at
 * several gateways, can draw on one account; admission bounds their usage not charged yet
 * together by what the account can fund, counted in Redis per account. Redis keeps nothing
 * on disk, so that count must be rebuilt from here: the partial index holds the uncharged
 * rows of each account, with their chunks, for an index-only sum. Rows metered before this
 * migration have no account (NULL) and are left out of it. Frozen.
 *
 * A plain CREATE INDEX: migrations run in a transaction, where CONCURRENTLY cannot.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_usage ADD COLUMN IF NOT EXISTS user_payment text`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS payg_usage_account_outstanding_idx ON payg_usage (user_payment) INCLUDE (chunk)
    WHERE charge_id IS NULL AND unbillable_reason IS NULL AND user_payment IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS payg_usage_account_outstanding_idx`.execute(db);
  await sql`ALTER TABLE payg_usage DROP COLUMN IF EXISTS user_payment`.execute(db);
}
