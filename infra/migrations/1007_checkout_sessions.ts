/**
 * Hosted checkout sessions: a merchant's requirement, offered once to whoever opens its
 * page. `status` moves open → paying → complete with a compare-and-set (one pay wins),
 * paying → open when the chain refused the payment, and open → expired once past
 * expires_at (the sweep, and each expiry announced once). Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('checkout_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('gateway', 'text', (c) => c.notNull())
    // open | paying | complete | expired
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('open'))
    // the requirement as its accepts entry, amounts in base units (strings)
    .addColumn('requirement', 'jsonb', (c) => c.notNull())
    .addColumn('tracking_id', 'text', (c) => c.notNull())
    .addColumn('label', 'text')
    .addColumn('success_url', 'text', (c) => c.notNull())
    .addColumn('cancel_url', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .addColumn('payer', 'text')
    .addColumn('policy', 'text')
    .addColumn('transaction', 'text')
    .execute();
  // the sweep reads the open sessions by their expiry
  await sql`CREATE INDEX checkout_sessions_open_expiry_idx ON checkout_sessions (expires_at) WHERE status = 'open'`.execute(db);
  await sql`CREATE INDEX checkout_sessions_gateway_idx ON checkout_sessions (gateway, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('checkout_sessions').ifExists().execute();
}
