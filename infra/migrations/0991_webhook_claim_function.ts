/**
 * The delivery workers' claim as a function whose plan cannot degrade with the outbox's
 * statistics. Frozen.
 *
 * The claim must walk the due index (next_attempt_at, id) in order, checking each row's
 * webhook as it goes, and stop after `limit` rows: a few hundred rows read whatever the
 * backlog. On a table whose statistics are missing or stale (a new database, a burst far
 * beyond what the last ANALYZE saw) the planner instead estimated a few dozen due rows and
 * chose a bitmap scan of every due row, a hash join and a sort: a claim then read the whole
 * backlog, 190 ms at 30,000 pending rows, and claims became the workers' bottleneck. The
 * function's own `enable_sort = off` leaves the ordered index scan as the only plan that
 * answers ORDER BY ... LIMIT cheaply; it applies to this function's statement alone.
 *
 * Same rules as before: SKIP LOCKED between workers; the lease outlives the transaction;
 * endpoints paused by a receiver are skipped; an ordered endpoint offers only its oldest
 * pending delivery.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION webhook_claim_due(p_worker text, p_limit integer, p_lease_ms integer)
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
      )
      UPDATE webhook_deliveries d
      SET locked_until = now() + p_lease_ms * interval '1 millisecond', locked_by = p_worker
      FROM picked, webhooks w
      WHERE d.id = picked.id AND w.id = d.webhook_id
      RETURNING d.id, d.webhook_id, d.event_id, d.event_name, d.payload::text,
        CASE WHEN json_typeof(d.payload->'timestamp') = 'string' THEN d.payload->>'timestamp' END,
        d.round, d.attempts, d.created_at, w.endpoint_url, w.secret,
        w.previous_secret, w.previous_secret_until, w.rate_limit_per_second, (w.failing_since IS NOT NULL)
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS webhook_claim_due(text, integer, integer)`.execute(db);
}
