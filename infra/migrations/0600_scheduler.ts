/**
 * The scheduler and the pay-as-you-go settler (commands/scheduler, commands/settlement). Frozen.
 *
 * - scheduler_gateways: a gateway whose payments the service executes, with the signer
 *   keypair the merchant delegated through change_gateway_signer (secret sealed like the
 *   signing keys, the gateway account as associated data). pending until the chain shows
 *   the signer, then active; stopped by DELETE.
 * - execution_intents: one row per (policy, due time), written before anything is sent.
 *   The signed transaction (wire, signature, blockhash) is stored before the send, so
 *   after a crash the same bytes are sent again (one signature, landed at most once) or,
 *   once their blockhash expired, the chain's policy account decides.
 * - execution_attempts: every attempt with its outcome and reason.
 * - payg_usage: one row per admitted pay-as-you-go request (its chunk), keyed by request
 *   id, written before the response leaves; charge_id once a charge covers it, or
 *   unbillable_reason with the chain's reason.
 * - payg_charges: each execute_payment(amount) of the settler, with the same
 *   sign-store-send discipline as intents.
 * - service_events: lifecycle events of the service's own (payment.failed, …), one per key.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('scheduler_gateways')
    .addColumn('gateway', 'text', (c) => c.primaryKey())
    .addColumn('authority', 'text', (c) => c.notNull())
    .addColumn('signer', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    // pending | active | stopped
    .addColumn('state', 'text', (c) => c.notNull())
    // api | fixtures
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('activated_at', 'timestamptz')
    .addColumn('stopped_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('execution_intents')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('tracking_id', 'text', (c) => c.notNull().defaultTo(''))
    // unix seconds: the due date this intent pays
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    // pending | sending | executed | dropped | past_due | given_up
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dunning_step', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('locked_by', 'text')
    .addColumn('payment_count_before', 'integer')
    .addColumn('signature', 'text')
    .addColumn('blockhash', 'text')
    .addColumn('wire', 'text')
    .addColumn('last_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('executed_at', 'timestamptz')
    .addUniqueConstraint('execution_intents_policy_due_key', ['policy', 'due_at'])
    .execute();
  await sql`CREATE INDEX execution_intents_open_idx ON execution_intents (next_attempt_at, id) WHERE status IN ('pending', 'sending', 'past_due')`.execute(db);

  await db.schema
    .createTable('execution_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('intent_id', 'bigint', (c) => c.references('execution_intents.id').onDelete('cascade'))
    .addColumn('charge_id', 'bigint')
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // executed | dropped | past_due | retry | cooldown | given_up | unbillable
    .addColumn('outcome', 'text', (c) => c.notNull())
    // the failure class's name (InsufficientBalance, rpc, blockhash, …) or empty
    .addColumn('reason_code', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('signature', 'text')
    .addColumn('lag_ms', 'bigint')
    .execute();
  await sql`CREATE INDEX execution_attempts_policy_idx ON execution_attempts (policy, id)`.execute(db);
  await sql`CREATE INDEX execution_attempts_gateway_idx ON execution_attempts (gateway, outcome)`.execute(db);

  await db.schema
    .createTable('payg_charges')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('amount', 'numeric', (c) => c.notNull())
    // sending | executed | failed
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('sending'))
    .addColumn('payment_count_before', 'integer', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('blockhash', 'text', (c) => c.notNull())
    .addColumn('wire', 'text', (c) => c.notNull())
    .addColumn('record_id', 'integer')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  // at most one charge in flight per policy, whichever settler process sends it
  await sql`CREATE UNIQUE INDEX payg_charges_in_flight_key ON payg_charges (policy) WHERE status = 'sending'`.execute(db);

  await db.schema
    .createTable('payg_usage')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('chunk', 'numeric', (c) => c.notNull())
    // the chain's period (unix seconds) the chunk was admitted in
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('metered_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('charge_id', 'bigint', (c) => c.references('payg_charges.id'))
    .addColumn('unbillable_reason', 'text')
    .execute();
  await sql`CREATE INDEX payg_usage_unsettled_idx ON payg_usage (policy, metered_at) WHERE charge_id IS NULL AND unbillable_reason IS NULL`.execute(db);
  await sql`CREATE INDEX payg_usage_period_idx ON payg_usage (policy, period_start)`.execute(db);

  await db.schema
    .createTable('service_events')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    // one event per key: a retried step never announces twice
    .addColumn('event_key', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('tracking_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('payload', 'json', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX service_events_policy_idx ON service_events (policy, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['service_events', 'payg_usage', 'payg_charges', 'execution_attempts', 'execution_intents', 'scheduler_gateways']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
