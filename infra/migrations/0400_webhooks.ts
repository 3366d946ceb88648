/**
 * Webhooks (commands/webhooks) and their delivery outbox (projections/webhooks). Frozen.
 *
 * - webhooks: the registrations. `gateway_account` is PDA("gateway", gateway_pubkey): a
 *   webhook registered under a gateway's authority then matches events that name the
 *   gateway account, and the other way round, without reading another read model.
 * - webhook_deliveries: the outbox, one row per (event, webhook), written in the
 *   projection's transaction and claimed by workers with FOR UPDATE SKIP LOCKED under a
 *   lease (locked_until) so that a crashed worker's rows are taken again.
 * - webhook_attempts: every HTTP attempt with its status, latency and error.
 * - webhook_policy_gateways: policy address → gateway, so events that name only a policy
 *   (status changed, deleted) reach the policy's gateway.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    .addColumn('gateway_pubkey', 'text', (c) => c.notNull())
    .addColumn('gateway_account', 'text', (c) => c.notNull())
    .addColumn('endpoint_url', 'text', (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    // 'aes-256-gcm:v1:<iv>:<tag>:<ciphertext>' (base64url), or 'plain:<base64url>' in development mode
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('webhooks_gateway_endpoint_key', ['gateway_pubkey', 'endpoint_url'])
    .execute();
  await sql`CREATE INDEX webhooks_gateway_account_idx ON webhooks (gateway_account)`.execute(db);

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    // the event as the events API returns it; json (not jsonb) keeps its text as written
    .addColumn('payload', 'json', (c) => c.notNull())
    // pending | delivered | dead
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    // 0 = first try with its quick retries; k = the k-th retry of the slow schedule
    .addColumn('round', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('locked_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addUniqueConstraint('webhook_deliveries_webhook_event_key', ['webhook_id', 'event_id'])
    .execute();
  await sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending'`.execute(db);

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('delivery_id', 'bigint', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'timestamptz', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('success', 'boolean', (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (webhook_id, id DESC)`.execute(db);
  await sql`CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id)`.execute(db);

  await db.schema
    .createTable('webhook_policy_gateways')
    .addColumn('policy', 'text', (c) => c.primaryKey())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_policy_gateways', 'webhook_attempts', 'webhook_deliveries', 'webhooks']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
