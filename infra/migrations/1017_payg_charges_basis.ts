/**
 * What a pay-as-you-go charge was signed against, so that one signed from a stale read of its
 * policy is never opened (commands/settlement/charges.ts, openCharge). Frozen.
 *
 * A charge's fate, when its status is no longer kept, is read from its policy's payment_count:
 * moved since payment_count_before means it landed. That holds only if payment_count_before was
 * the count when the charge was opened. A read of the policy from before another settler's charge
 * landed (two scheduler processes), or from an RPC node behind the one that confirmed it, gives
 * an older count: a charge signed from it that never lands is taken for landed (the other
 * charge moved the count), and its usage is recorded as charged and never paid.
 *
 * - policy_created_at: the policy's created_at on chain (unix seconds) when the charge was
 *   signed. A policy address is reused when its user payment is deleted and created again, and
 *   the new policy counts its payments from zero: the charges of the old one say nothing of it.
 *   NULL for charges opened before this migration.
 * - payg_charges_executed_idx: a policy's executed charges by when they finished, for the check.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_charges ADD COLUMN policy_created_at bigint`.execute(db);
  await sql`CREATE INDEX payg_charges_executed_idx ON payg_charges (policy, finished_at) WHERE status = 'executed'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS payg_charges_executed_idx`.execute(db);
  await sql`ALTER TABLE payg_charges DROP COLUMN IF EXISTS policy_created_at`.execute(db);
}
