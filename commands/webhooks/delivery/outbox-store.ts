/**
 * SQL of the delivery workers over the outbox (projections/webhooks/tables.ts).
 *
 * Times that order work between workers (due, leases) are the database's `now()`: one
 * clock for every node, whatever their own clocks say.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';

export interface ClaimedDelivery {
  id: string;
  webhook_id: number;
  event_id: string;
  event_name: string;
  /** the payload's JSON text as stored: spliced into the body, never parsed here */
  payload_text: string;
  /** the payload's `timestamp` (the event's block time), when it has one */
  payload_timestamp: string | null;
  round: number;
  attempts: number;
  created_at: Date;
  endpoint_url: string;
  secret: string;
  /** the secret rotated out and until when it still signs (application clock) */
  previous_secret: string | null;
  previous_secret_until: Date | null;
  rate_limit_per_second: number | null;
  /** the endpoint had a failure streak when claimed: a success ends it */
  failing: boolean;
  /**
   * Who holds the row's lease: the claiming worker (absent), or the fast path's holder
   * for a row taken from the projection's push (projections/webhooks/doc.ts).
   */
  holder?: string;
}

/**
 * Leases up to `limit` due deliveries of active webhooks to `worker`: the SQL function
 * webhook_claim_due (migration 0991, where its plan is explained). SKIP LOCKED lets any
 * number of workers claim at once without waiting on each other or taking a row twice;
 * the lease (locked_until) outlives the transaction, so a row stays theirs while they
 * POST, and returns to the pool if they die.
 *
 * Skipped: endpoints a receiver paused (Retry-After), and on an ordered endpoint every
 * delivery but its oldest pending one, so it has one delivery at a time, in outbox order
 * (the projection writes rows in stream order).
 */
export async function claimDue(db: Db, worker: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedDelivery>`SELECT * FROM webhook_claim_due(${worker}, ${limit}, ${leaseMs})`.execute(db);
  return rows;
}

/**
 * Takes pushed rows over from the fast path's holder, with a fresh lease: for a worker that
 * popped them too late for the lease they were written with. The ids it now holds.
 */
export async function takeOver(db: Db, worker: string, from: string, ids: readonly string[], leaseMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    UPDATE webhook_deliveries SET locked_by = ${worker}, locked_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = ANY (${[...ids]}::bigint[]) AND locked_by = ${from} AND status = 'pending'
    RETURNING id`.execute(db);
  return new Set(rows.map((r) => String(r.id)));
}

/** Gives a delivery back without an attempt, due again in `delayMs` (its endpoint's rate is used up). */
export async function giveBack(db: Db, holder: string, id: string, delayMs: number): Promise<void> {
  await sql`UPDATE webhook_deliveries SET locked_until = NULL, locked_by = NULL, next_attempt_at = now() + ${delayMs} * interval '1 millisecond'
    WHERE id = ${id} AND locked_by = ${holder} AND status = 'pending'`.execute(db);
}

/**
 * Outcome writes commit without waiting for their WAL flush (synchronous_commit off, this
 * transaction only). What a crash can lose is the last fraction of a second of outcomes:
 * those deliveries are then attempted again when their lease ends, with the same
 * webhook-id, which at-least-once delivery allows; a delivery is never lost by it.
 */
async function outcomeTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`SET LOCAL synchronous_commit = off`.execute(trx);
    return fn(trx);
  });
}

export interface AttemptRecord {
  deliveryId: string;
  webhookId: number;
  eventId: string;
  eventName: string;
  attempt: number;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  success: boolean;
}

/** What the delivery becomes after the attempt. */
export type NextState =
  | { kind: 'delivered' }
  /** a quick retry follows: keep the lease for the delay and the next attempt */
  | { kind: 'retry'; leaseMs: number }
  | { kind: 'pending'; round: number; delayMs: number }
  | { kind: 'dead' };

function stateUpdate(next: NextState) {
  switch (next.kind) {
    case 'delivered':
      return sql`status = 'delivered', finished_at = now(), locked_until = NULL, locked_by = NULL`;
    case 'retry':
      return sql`locked_until = now() + ${next.leaseMs} * interval '1 millisecond'`;
    case 'pending':
      return sql`round = ${next.round}, next_attempt_at = now() + ${next.delayMs} * interval '1 millisecond', locked_until = NULL, locked_by = NULL`;
    case 'dead':
      return sql`status = 'dead', finished_at = now(), locked_until = NULL, locked_by = NULL`;
    default: {
      const never: never = next;
      throw new Error(`unknown state ${JSON.stringify(never)}`);
    }
  }
}

export type RecordOutcome = 'held' | 'lost' | 'gone';

/**
 * Records an attempt and moves its delivery on, in one statement. The attempt is always
 * recorded while its delivery exists; the delivery changes only while `holder` still
 * holds it ('lost' otherwise: its lease ran out and another worker has it). 'gone': the
 * delivery was deleted meanwhile (its webhook deleted): nothing is recorded.
 */
export async function recordAttempt(db: Db, holder: string, a: AttemptRecord, next: NextState): Promise<RecordOutcome> {
  const { rows } = await outcomeTransaction(db, (trx) => sql<{ present: boolean; moved: boolean }>`
    WITH present AS (SELECT id FROM webhook_deliveries WHERE id = ${a.deliveryId}),
    attempt AS (
      INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_name, attempt, attempted_at, status_code, latency_ms, error, success)
      SELECT ${a.deliveryId}, ${a.webhookId}, ${a.eventId}, ${a.eventName}, ${a.attempt}, ${a.attemptedAt}, ${a.statusCode}, ${a.latencyMs}, ${a.error}, ${a.success}
      FROM present
    ),
    moved AS (
      UPDATE webhook_deliveries
      SET attempts = attempts + 1, last_error = ${a.error}, ${stateUpdate(next)}
      WHERE id = ${a.deliveryId} AND locked_by = ${holder} AND status = 'pending'
      RETURNING id
    )
    SELECT EXISTS (SELECT 1 FROM present) AS present, EXISTS (SELECT 1 FROM moved) AS moved`.execute(trx));
  const r = rows[0];
  return r?.moved === true ? 'held' : r?.present === true ? 'lost' : 'gone';
}

const STATE_CODE: Record<NextState['kind'], string> = { delivered: 'delivered', retry: 'retry', pending: 'pending', dead: 'dead' };

/**
 * recordAttempt for many attempts in one statement (one commit): what lets a worker keep
 * up under load. Same rules; outcomes in input order ('held' or 'lost': a delivery
 * deleted meanwhile counts as lost here, and its attempt is not recorded).
 */
export async function recordAttempts(db: Db, items: readonly { a: AttemptRecord; next: NextState; holder: string }[]): Promise<RecordOutcome[]> {
  if (items.length === 0) return [];
  const input = JSON.stringify(items.map(({ a, next, holder }) => ({
    holder,
    delivery_id: a.deliveryId, webhook_id: a.webhookId, event_id: a.eventId, event_name: a.eventName, attempt: a.attempt,
    attempted_at: a.attemptedAt.toISOString(), status_code: a.statusCode, latency_ms: a.latencyMs, error: a.error, success: a.success,
    next: STATE_CODE[next.kind],
    lease_ms: next.kind === 'retry' ? next.leaseMs : null,
    round: next.kind === 'pending' ? next.round : null,
    delay_ms: next.kind === 'pending' ? next.delayMs : null,
  })));
  const { rows } = await outcomeTransaction(db, (trx) => sql<{ id: string }>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${input}::json) AS x(
        holder text, delivery_id bigint, webhook_id integer, event_id text, event_name text, attempt integer, attempted_at timestamptz,
        status_code integer, latency_ms integer, error text, success boolean, next text, lease_ms integer, round integer, delay_ms integer)
    ),
    attempts AS (
      INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_name, attempt, attempted_at, status_code, latency_ms, error, success)
      SELECT delivery_id, webhook_id, event_id, event_name, attempt, attempted_at, status_code, latency_ms, error, success FROM input i
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = i.delivery_id)
    )
    UPDATE webhook_deliveries d SET
      attempts = d.attempts + 1,
      last_error = i.error,
      status = CASE i.next WHEN 'delivered' THEN 'delivered' WHEN 'dead' THEN 'dead' ELSE 'pending' END,
      finished_at = CASE WHEN i.next IN ('delivered', 'dead') THEN now() ELSE d.finished_at END,
      round = CASE WHEN i.next = 'pending' THEN i.round ELSE d.round END,
      next_attempt_at = CASE WHEN i.next = 'pending' THEN now() + i.delay_ms * interval '1 millisecond' ELSE d.next_attempt_at END,
      locked_until = CASE WHEN i.next = 'retry' THEN now() + i.lease_ms * interval '1 millisecond' ELSE NULL END,
      locked_by = CASE WHEN i.next = 'retry' THEN d.locked_by ELSE NULL END
    FROM input i
    WHERE d.id = i.delivery_id AND d.locked_by = i.holder AND d.status = 'pending'
    RETURNING d.id`.execute(trx));
  const held = new Set(rows.map((r) => String(r.id)));
  return items.map(({ a }) => (held.has(a.deliveryId) ? 'held' : 'lost'));
}

/**
 * Gives back leases at a graceful stop, so other workers need not wait them out; a pushed
 * row (due only when its lease ends) becomes due at once.
 */
export async function releaseLeases(db: Db, holder: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE webhook_deliveries SET locked_until = NULL, locked_by = NULL, next_attempt_at = LEAST(next_attempt_at, now())
    WHERE id = ANY (${[...ids]}::bigint[]) AND locked_by = ${holder}`.execute(db);
}

/** releaseLeases of deliveries each with its own holder (the worker's, or the fast path's). */
export async function releaseHeld(db: Db, worker: string, rows: readonly Pick<ClaimedDelivery, 'id' | 'holder'>[]): Promise<void> {
  const byHolder = new Map<string, string[]>();
  for (const r of rows) {
    const h = r.holder ?? worker;
    byHolder.set(h, [...(byHolder.get(h) ?? []), r.id]);
  }
  for (const [h, ids] of byHolder) await releaseLeases(db, h, ids);
}
