/**
 * Webhook payloads stored once per event, not once per delivery. Frozen.
 *
 * - webhook_events: the payload of a chain event queued by the webhooks projection, keyed
 *   by the event's identity, with the webhooks it was queued for (`webhook_ids`): retention
 *   finds whether any of its deliveries is left through the outbox's own
 *   (webhook_id, event_id) key, with no index of its own on the outbox. At 10 webhooks an
 *   event the outbox rows shrink from about 1.3 KB to about 150 bytes, and so does what
 *   each claim and outcome update rewrites.
 * - webhook_deliveries.payload becomes optional: NULL means "the event's, in
 *   webhook_events". Other writers (lifecycle events, notices, tests) still store theirs in
 *   the row.
 * - webhook_claim_due returns the row's payload, else its event's: same signature and
 *   plan as 0991 (the payload is read only for the rows claimed).
 * - webhook_attempts loses its foreign key to the delivery: checking it (a KEY SHARE lock
 *   and a lookup per attempt) took two thirds of an outcome statement's time (34 of 52 ms
 *   for 500 attempts, EXPLAIN ANALYZE). The attempts still go with their delivery (a
 *   trigger deletes them, whoever deletes it: retention, a webhook's cascade), and writers
 *   insert an attempt only for a delivery that exists.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_events (
      event_id text PRIMARY KEY,
      payload json NOT NULL,
      webhook_ids integer[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX webhook_events_created_brin ON webhook_events USING brin (created_at)`.execute(db);
  await sql`ALTER TABLE webhook_deliveries ALTER COLUMN payload DROP NOT NULL`.execute(db);
  await sql`ALTER TABLE webhook_attempts DROP CONSTRAINT IF EXISTS webhook_attempts_delivery_id_fkey`.execute(db);
  await sql`
    CREATE FUNCTION webhook_attempts_follow_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM webhook_attempts WHERE delivery_id = OLD.id;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER webhook_attempts_follow_delivery AFTER DELETE ON webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION webhook_attempts_follow_delivery()`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION webhook_claim_due(p_worker text, p_limit integer, p_lease_ms integer)
    RETURNS TABLE (
      id bigint, webhook_id integer, event_id text, event_name text, payload_text text, payload_timestamp text,
      round integer, attempts integer, created_at timestamptz, endpoint_url text, secret text,
      previous_secret text, previous_secret_until timestamptz, rate_limit_per_second integer, failing boolean)
    LANGUAGE sql VOLATILE
    SET enable_sort = off
    AS $$
      WITH picked AS (
        SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'pending' AND d.next_attempt_at <= now()
          AND (d.locked_until IS NULL OR d.locked_until < now())
          AND w.active AND (w.paused_until IS NULL OR w.paused_until <= now())
          AND (NOT w.ordered OR NOT EXISTS (
            SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = d.webhook_id AND e.status = 'pending' AND e.id < d.id))
        ORDER BY d.next_attempt_at, d.id
        LIMIT p_limit
        FOR UPDATE OF d SKIP LOCKED
      ),
      claimed AS (
        UPDATE webhook_deliveries d
        SET locked_until = now() + p_lease_ms * interval '1 millisecond', locked_by = p_worker
        FROM picked, webhooks w
        WHERE d.id = picked.id AND w.id = d.webhook_id
        RETURNING d.id, d.webhook_id, d.event_id, d.event_name, d.payload, d.round, d.attempts, d.created_at, w.endpoint_url, w.secret,
          w.previous_secret, w.previous_secret_until, w.rate_limit_per_second, (w.failing_since IS NOT NULL) AS failing
      )
      SELECT c.id, c.webhook_id, c.event_id, c.event_name, p.payload::text,
        CASE WHEN json_typeof(p.payload->'timestamp') = 'string' THEN p.payload->>'timestamp' END,
        c.round, c.attempts, c.created_at, c.endpoint_url, c.secret,
        c.previous_secret, c.previous_secret_until, c.rate_limit_per_second, c.failing
      FROM claimed c
      CROSS JOIN LATERAL (
        SELECT COALESCE(c.payload, (SELECT ev.payload FROM webhook_events ev WHERE ev.event_id = c.event_id)) AS payload) p
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS webhook_attempts_follow_delivery ON webhook_deliveries`.execute(db);
  await sql`DROP FUNCTION IF EXISTS webhook_attempts_follow_delivery()`.execute(db);
  await sql`DELETE FROM webhook_attempts a WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)`.execute(db);
  await sql`ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE`.execute(db);
  await sql`
    UPDATE webhook_deliveries d SET payload = ev.payload FROM webhook_events ev
    WHERE d.payload IS NULL AND ev.event_id = d.event_id`.execute(db);
  await sql`ALTER TABLE webhook_deliveries ALTER COLUMN payload SET NOT NULL`.execute(db);
  await sql`DROP TABLE IF EXISTS webhook_events`.execute(db);
  // webhook_claim_due: 0991's text, as it was
  await sql`DROP FUNCTION IF EXISTS webhook_claim_due(text, integer, integer)`.execute(db);
  const m0991 = await import('./0991_webhook_claim_function.js');
  await m0991.up(db);
}
