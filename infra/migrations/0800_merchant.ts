/**
 * The merchant's read models (projections/merchant): fee settings per gateway, the
 * policies as the merchant counts them, subscribers per gateway + mint + payer, the
 * running MRR and revenue buckets (day, week, month UTC). Amounts are numeric, exact.
 * Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('merchant_program')
    .addColumn('id', 'smallint', (c) => c.primaryKey())
    .addColumn('protocol_share_bps', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createTable('merchant_gateways')
    .addColumn('gateway', 'text', (c) => c.primaryKey())
    .addColumn('fee_bps', 'integer', (c) => c.notNull())
    .addColumn('net_mode', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('custom_protocol_share_bps', 'integer')
    .execute();
  await db.schema.createTable('merchant_user_payments')
    .addColumn('user_payment', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('token_mint', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createTable('merchant_policies')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('user_payment', 'text', (c) => c.notNull())
    .addColumn('payer', 'text')
    .addColumn('token_mint', 'text')
    .addColumn('policy_type', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('deleted', 'boolean', (c) => c.notNull())
    .addColumn('ended', 'boolean', (c) => c.notNull())
    .addColumn('counted', 'boolean', (c) => c.notNull())
    .addColumn('monthly_micro', 'numeric', (c) => c.notNull())
    .addColumn('next_due', 'bigint')
    .addColumn('created_at', 'bigint')
    .execute();
  await sql`CREATE INDEX merchant_policies_subscriber_idx ON merchant_policies (gateway, token_mint, payer)`.execute(db);
  // policies indexed before their user payment, found again when it arrives
  await sql`CREATE INDEX merchant_policies_orphan_idx ON merchant_policies (user_payment) WHERE token_mint IS NULL`.execute(db);
  await db.schema.createTable('merchant_subscribers')
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('token_mint', 'text', (c) => c.notNull())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('policies', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('active_policies', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ended'))
    .addColumn('total_paid', 'numeric', (c) => c.notNull().defaultTo(0))
    .addColumn('payments', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('first_payment_at', 'bigint')
    .addColumn('last_payment_at', 'bigint')
    .addColumn('next_due', 'bigint')
    .addColumn('past_due', 'boolean', (c) => c.notNull().defaultTo(false))
    .addPrimaryKeyConstraint('merchant_subscribers_pkey', ['gateway', 'payer', 'token_mint'])
    .execute();
  await sql`CREATE INDEX merchant_subscribers_status_idx ON merchant_subscribers (gateway, status, payer)`.execute(db);
  await db.schema.createTable('merchant_mrr')
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('token_mint', 'text', (c) => c.notNull())
    .addColumn('mrr_micro', 'numeric', (c) => c.notNull())
    .addPrimaryKeyConstraint('merchant_mrr_pkey', ['gateway', 'token_mint'])
    .execute();
  await db.schema.createTable('merchant_revenue')
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('token_mint', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('bucket_start', 'bigint', (c) => c.notNull())
    .addColumn('gross', 'numeric', (c) => c.notNull())
    .addColumn('gateway_fee', 'numeric', (c) => c.notNull())
    .addColumn('protocol_fee', 'numeric', (c) => c.notNull())
    .addColumn('net', 'numeric', (c) => c.notNull())
    .addColumn('payments', 'bigint', (c) => c.notNull())
    .addColumn('new_subscriptions', 'integer', (c) => c.notNull())
    .addColumn('ended_subscriptions', 'integer', (c) => c.notNull())
    .addColumn('mrr_micro', 'numeric', (c) => c.notNull())
    .addPrimaryKeyConstraint('merchant_revenue_pkey', ['gateway', 'bucket', 'token_mint', 'bucket_start'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['merchant_revenue', 'merchant_mrr', 'merchant_subscribers', 'merchant_policies', 'merchant_user_payments', 'merchant_gateways', 'merchant_program']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
