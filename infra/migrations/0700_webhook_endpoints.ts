/**
 * Webhooks as merchants expect them. Frozen.
 *
 * - webhooks.event_types: the event types an endpoint receives (NULL = all). A BEFORE
 *   INSERT trigger on the outbox drops rows an endpoint did not ask for, so the filter
 *   holds for every writer of the outbox (chain events, lifecycle events, notices);
 *   webhook.test, sent only when asked for, always passes. A writer that filters itself
 *   (the webhooks projection, 10,000 rows/s at the bench's rate) says so with the
 *   transaction-local setting tributary.outbox_filtered = 'on', and the trigger's WHEN
 *   skips the per-row lookup.
 * - webhooks.ordered: one delivery at a time, in outbox (stream) order.
 * - webhooks.rate_limit_per_second: the most attempts per second, across workers.
 * - webhooks.paused_until: a receiver's Retry-After (database clock).
 * - webhooks.previous_secret / previous_secret_until: the secret rotated out, still
 *   signing until the grace ends (application clock).
 * - webhooks.disabled_reason, failing_since, last_failure_at, failure_count: the streak
 *   of failed attempts with no success between them, and why an endpoint was disabled.
 * - indexes for ordered claims (pending by webhook) and retention (created_at, BRIN).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks')
    .addColumn('event_types', sql`text[]`)
    .addColumn('ordered', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('rate_limit_per_second', 'integer')
    .addColumn('paused_until', 'timestamptz')
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'timestamptz')
    .addColumn('disabled_reason', 'text')
    .addColumn('failing_since', 'timestamptz')
    .addColumn('last_failure_at', 'timestamptz')
    .addColumn('failure_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  // Every index costs each outbox write (10,000 a second at the bench's rate), so few and small:
  // pending rows by webhook for ordered claims (partial: it stays the size of the backlog),
  // and a BRIN on created_at for retention (rows arrive in time order; nearly free to keep).
  await sql`CREATE INDEX webhook_deliveries_pending_by_webhook_idx ON webhook_deliveries (webhook_id, id) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_created_brin ON webhook_deliveries USING brin (created_at)`.execute(db);
  // Room on each page, so a claim (it sets only the lease columns, in no index) is a HOT update.
  await sql`ALTER TABLE webhook_deliveries SET (fillfactor = 80)`.execute(db);
  // An attempt's webhook is its delivery's (whose own key cascades from the webhook): the
  // second key only made every attempt share-lock its webhook's row, thousands a second on
  // the same few rows from every worker (multixacts).
  await sql`ALTER TABLE webhook_attempts DROP CONSTRAINT IF EXISTS webhook_attempts_webhook_id_fkey`.execute(db);

  await sql`
    CREATE FUNCTION webhook_outbox_filter() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE wanted text[];
    BEGIN
      SELECT event_types INTO wanted FROM webhooks WHERE id = NEW.webhook_id;
      IF wanted IS NULL OR NEW.event_name = ANY (wanted) OR NEW.event_name = 'webhook.test' THEN
        RETURN NEW;
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER webhook_outbox_filter BEFORE INSERT ON webhook_deliveries
    FOR EACH ROW WHEN (current_setting('tributary.outbox_filtered', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION webhook_outbox_filter()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS webhook_outbox_filter ON webhook_deliveries`.execute(db);
  await sql`DROP FUNCTION IF EXISTS webhook_outbox_filter()`.execute(db);
  await sql`ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE`.execute(db);
  await sql`ALTER TABLE webhook_deliveries RESET (fillfactor)`.execute(db);
  for (const i of ['webhook_deliveries_pending_by_webhook_idx', 'webhook_deliveries_created_brin']) {
    await sql`DROP INDEX IF EXISTS ${sql.raw(i)}`.execute(db);
  }
  await db.schema.alterTable('webhooks')
    .dropColumn('event_types').dropColumn('ordered').dropColumn('rate_limit_per_second').dropColumn('paused_until')
    .dropColumn('previous_secret').dropColumn('previous_secret_until').dropColumn('disabled_reason')
    .dropColumn('failing_since').dropColumn('last_failure_at').dropColumn('failure_count')
    .execute();
}
