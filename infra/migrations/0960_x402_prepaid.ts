/**
 * x402://prepaid (commands/x402/prepaid). Frozen.
 *
 * - prepaid_credits: one row per paid credit (a OneTime policy the payer executed in its
 *   Payment transaction), written when the payment is settled. The credit is money the
 *   merchant has received, so what it buys must outlive Redis and the policy account
 *   (the payer may close a completed policy to get its rent back).
 * - prepaid_usage: one row per admitted request (its cost), keyed by request id, written
 *   before the request is counted in Redis; a lost counter is rebuilt from these rows.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('prepaid_credits')
    .addColumn('policy', 'text', (c) => c.primaryKey())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('requirement_id', 'text', (c) => c.notNull())
    .addColumn('credit', 'numeric', (c) => c.notNull())
    .addColumn('transaction', 'text')
    .addColumn('paid_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('prepaid_usage')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('amount', 'numeric', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX prepaid_usage_policy_idx ON prepaid_usage (policy)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('prepaid_usage').ifExists().execute();
  await db.schema.dropTable('prepaid_credits').ifExists().execute();
}
