/**
 * Each payment of a prepaid credit, and which policy of its address the credit row counts
 * (commands/x402/prepaid/ledger.ts, recordCredit). Frozen.
 *
 * A policy address is reused when the payer deletes its policy and its user payment and
 * creates them again: the program restarts the policy count, so policy 1 is at the same
 * address. A credit bought there again was taken for the one recorded before (the row is
 * keyed by the address): the money was taken and every draw refused as used up. The credit
 * row now counts every payment made at its address (its credit the sum, its requirement the
 * latest purchase's), and each payment has a row of its own.
 *
 * - prepaid_credits.policy_created_at: the created_at on chain (unix seconds) of the policy
 *   whose payment the row counted last; NULL for credits recorded before this migration.
 * - prepaid_credit_payments: one row per policy paid at an address (its created_at and the
 *   transaction that paid it: two policies created within one second share a created_at), with
 *   the amount; the reconciliation's prepaid records. Credits recorded before this migration are
 *   copied in with a NULL created_at.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE prepaid_credits ADD COLUMN policy_created_at bigint`.execute(db);
  await sql`
    CREATE TABLE prepaid_credit_payments (
      policy text NOT NULL,
      policy_created_at bigint,
      gateway text NOT NULL,
      requirement_id text NOT NULL,
      amount numeric NOT NULL,
      transaction text,
      paid_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX prepaid_credit_payments_gateway_idx ON prepaid_credit_payments (gateway, paid_at)`.execute(db);
  await sql`CREATE UNIQUE INDEX prepaid_credit_payments_policy_idx ON prepaid_credit_payments (policy, policy_created_at, transaction) NULLS NOT DISTINCT`.execute(db);
  await sql`
    INSERT INTO prepaid_credit_payments (policy, policy_created_at, gateway, requirement_id, amount, transaction, paid_at)
    SELECT policy, NULL, gateway, requirement_id, credit, transaction, paid_at FROM prepaid_credits`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS prepaid_credit_payments`.execute(db);
  await sql`ALTER TABLE prepaid_credits DROP COLUMN IF EXISTS policy_created_at`.execute(db);
}
