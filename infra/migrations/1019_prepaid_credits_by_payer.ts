/**
 * The prepaid credits of one payer under one requirement, found without a policy account
 * (commands/x402/prepaid/ledger.ts, creditsOf): a payer who closed its completed policy for
 * the rent gets a JWT again for the credit left on it. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX prepaid_credits_payer_idx ON prepaid_credits (payer, requirement_id, paid_at DESC)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS prepaid_credits_payer_idx`.execute(db);
}
