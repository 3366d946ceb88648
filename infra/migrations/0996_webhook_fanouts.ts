/**
 * Fan-out rows: a chain event's first attempts on the fast path cost one row, not one
 * outbox row per endpoint written up front. Frozen.
 *
 * - webhook_fanouts: one row per event the webhooks projection pushed to the workers
 *   (commands/webhooks/delivery/fanouts.ts): the webhooks it goes to and a lease
 *   (lease_until) for their first attempts. A worker writes each delivery's outbox row
 *   only once the first attempt's outcome is known (delivered, waiting for a retry, dead),
 *   then deletes the fan-out. A fan-out whose lease ended (its worker died, its push was
 *   lost) is expanded by any worker into due outbox rows for the webhooks that have none
 *   yet, and the ordinary claim takes them: none lost, the same webhook-id.
 * - Its key is its own (a replayed event may be fanned out twice: its outcomes then meet
 *   on the outbox's (webhook_id, event_id) key); the lease index serves the expansion.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_fanouts (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL,
      event_name text NOT NULL,
      webhook_ids integer[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX webhook_fanouts_lease_idx ON webhook_fanouts (lease_until)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // what was still fanned out becomes due outbox rows, as the expansion would make them
  await sql`
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload, created_at)
    SELECT w.id, f.event_id, f.event_name, NULL, f.created_at
    FROM webhook_fanouts f CROSS JOIN LATERAL unnest(f.webhook_ids) AS w(id)
    WHERE EXISTS (SELECT 1 FROM webhooks h WHERE h.id = w.id)
    ON CONFLICT (webhook_id, event_id) DO NOTHING`.execute(db);
  await sql`DROP TABLE IF EXISTS webhook_fanouts`.execute(db);
}
