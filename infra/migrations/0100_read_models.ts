/**
 * Read models of gateways, user payments, payment and composable policies, payments and
 * daily payment stats. Frozen once shipped. Times are unix seconds (bigint) as the chain
 * reports them; amounts are numeric(20,0): u64 exactly, and sums past u64 stay exact.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('gateways')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('authority', 'text', (c) => c.notNull())
    .addColumn('fee_recipient', 'text', (c) => c.notNull())
    .addColumn('signer', 'text', (c) => c.notNull())
    .addColumn('fee_bps', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull())
    .addColumn('deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'bigint')
    .addColumn('updated_at', 'bigint')
    .addColumn('deleted_at', 'bigint')
    .addColumn('created_slot', 'bigint', (c) => c.notNull())
    .addColumn('created_signature', 'text', (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX gateways_authority_idx ON gateways (authority)`.execute(db);

  await db.schema
    .createTable('user_payments')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('token_mint', 'text', (c) => c.notNull())
    .addColumn('token_account', 'text', (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull())
    .addColumn('created_at', 'bigint')
    .addColumn('updated_at', 'bigint')
    .addColumn('deleted_at', 'bigint')
    .addColumn('created_slot', 'bigint', (c) => c.notNull())
    .addColumn('created_signature', 'text', (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX user_payments_owner_idx ON user_payments (owner, token_mint)`.execute(db);

  for (const p of ['payment', 'composable'] as const) {
    // each policy projection keeps its own copy of user payment → owner, mint, so that it
    // never reads another projection's tables (which may be ahead or behind it)
    await db.schema
      .createTable(`${p}_policy_user_payments`)
      .addColumn('user_payment', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('token_mint', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable(`${p}_policies`)
      .addColumn('address', 'text', (c) => c.primaryKey())
      .addColumn('policy_id', 'bigint', (c) => c.notNull())
      .addColumn('user_payment', 'text', (c) => c.notNull())
      .addColumn('owner', 'text')
      .addColumn('token_mint', 'text')
      .addColumn('gateway', 'text', (c) => c.notNull())
      .addColumn('recipient', 'text', (c) => c.notNull())
      .addColumn('variant', 'text', (c) => c.notNull())
      .addColumn('policy_type', 'jsonb', (c) => c.notNull())
      .addColumn('memo', 'bytea', (c) => c.notNull())
      .addColumn('tracking_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('total_paid', sql`numeric(40,0)`, (c) => c.notNull())
      .addColumn('total_output', sql`numeric(40,0)`)
      .addColumn('extra', 'jsonb')
      .addColumn('payment_count', 'integer', (c) => c.notNull())
      .addColumn('last_payment_at', 'bigint')
      .addColumn('last_payment_signature', 'text')
      .addColumn('next_payment_due', 'bigint')
      .addColumn('created_at', 'bigint')
      .addColumn('updated_at', 'bigint')
      .addColumn('created_slot', 'bigint', (c) => c.notNull())
      .addColumn('created_signature', 'text', (c) => c.notNull())
      .addColumn('deleted', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('deleted_at', 'bigint')
      // the normalized policy as JSON text, rendered by the projection: lists are assembled
      // from stored text instead of being parsed, reshaped and serialized per request
      // (null only for rows written by hand, which the lists then leave out)
      .addColumn('doc', 'text')
      .execute();
    // one index per list filter; lists are newest first and exclude deleted policies
    const t = sql.table(`${p}_policies`);
    const live = sql`WHERE NOT deleted`;
    const ix = (name: string, cols: string) => sql`CREATE INDEX ${sql.id(`${p}_policies_${name}_idx`)} ON ${t} (${sql.raw(cols)}) ${live}`.execute(db);
    await ix('gateway', 'gateway, token_mint, created_slot DESC, address DESC');
    await ix('recipient', 'recipient, token_mint, created_slot DESC, address DESC');
    await ix('owner', 'owner, token_mint, created_slot DESC, address DESC');
    await ix('user_payment', 'user_payment, created_slot DESC, address DESC');
    await ix('memo', 'memo, created_slot DESC, address DESC');
    await ix('mint', 'token_mint, created_slot DESC, address DESC');
    await db.schema
      .createTable(`${p}_policy_status_history`)
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('policy', 'text', (c) => c.notNull())
      .addColumn('old_status', 'text')
      .addColumn('new_status', 'text', (c) => c.notNull())
      .addColumn('cause', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint')
      .addColumn('slot', 'bigint', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${p}_policy_status_history_pk`, ['policy', 'event_id'])
      .execute();
  }

  await db.schema
    .createTable('payments')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('slot', 'bigint', (c) => c.notNull())
    .addColumn('event_index', 'integer', (c) => c.notNull())
    .addColumn('block_time', 'bigint')
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('amount', sql`numeric(20,0)`, (c) => c.notNull())
    .addColumn('output_amount', sql`numeric(20,0)`)
    .addColumn('gateway_fee', sql`numeric(20,0)`)
    .addColumn('protocol_fee', sql`numeric(20,0)`)
    .addColumn('payer', 'text')
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('token_mint', 'text')
    .addColumn('target_program', 'text')
    .addColumn('record_id', 'bigint', (c) => c.notNull())
    .addColumn('memo', 'bytea')
    .addColumn('tracking_id', 'text')
    // the API event as JSON text (see the policies' doc)
    .addColumn('doc', 'text')
    .execute();
  await sql`CREATE INDEX payments_policy_idx ON payments (policy, slot DESC, record_id DESC, event_id DESC)`.execute(db);
  await sql`CREATE INDEX payments_gateway_at_idx ON payments (gateway, at) WHERE kind = 'PaymentRecord'`.execute(db);
  await sql`CREATE INDEX payments_at_idx ON payments (at) WHERE kind = 'PaymentRecord'`.execute(db);
  await sql`CREATE INDEX payments_memo_idx ON payments (memo) WHERE memo IS NOT NULL`.execute(db);
  await db.schema
    .createTable('payment_composable_memos')
    .addColumn('composable_policy', 'text', (c) => c.primaryKey())
    .addColumn('memo', 'bytea', (c) => c.notNull())
    .addColumn('tracking_id', 'text', (c) => c.notNull())
    .addColumn('input_mint', 'text')
    .execute();

  await db.schema
    .createTable('payment_stats_daily')
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('day', 'bigint', (c) => c.notNull()) // days since 1970-01-01 UTC: floor(at / 86400)
    .addColumn('payments', 'bigint', (c) => c.notNull())
    .addColumn('volume', sql`numeric(40,0)`, (c) => c.notNull())
    .addPrimaryKeyConstraint('payment_stats_daily_pk', ['gateway', 'day'])
    .execute();
  await sql`CREATE INDEX payment_stats_daily_day_idx ON payment_stats_daily (day)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'payment_stats_daily', 'payment_composable_memos', 'payments',
    'composable_policy_status_history', 'composable_policies', 'composable_policy_user_payments',
    'payment_policy_status_history', 'payment_policies', 'payment_policy_user_payments',
    'user_payments', 'gateways',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
