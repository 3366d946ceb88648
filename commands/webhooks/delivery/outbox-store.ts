/**
 * SQL of the delivery workers over the outbox (projections/webhooks/tables.ts).
 *
 * Times that order work between workers (due, leases) are the database's `now()`: one
 * clock for every node, whatever their own clocks say.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { handToClaim, type FanoutHold } from './fanouts.js';

export interface ClaimedDelivery {
  /** '' while a fan-out's delivery is not written yet (`fanout`) */
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
   * Set while the delivery is a fan-out's, popped from the projection's push and not
   * written yet (./fanouts.ts): its first record writes its row.
   */
  fanout?: FanoutHold;
  /** the body's bytes, when already encoded for another delivery of the same event (the body is the event's, whatever the webhook) */
  body?: Buffer;
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

/** Gives a delivery back without an attempt, due again in `delayMs` (its endpoint's rate is used up). */
export async function giveBack(db: Db, holder: string, id: string, delayMs: number): Promise<void> {
  await sql`UPDATE webhook_deliveries SET locked_until = NULL, locked_by = NULL, next_attempt_at = now() + ${delayMs} * interval '1 millisecond'
    WHERE id = ${id} AND locked_by = ${holder} AND status = 'pending'`.execute(db);
}

/**
 * The settings of every outcome write, as one expression that each of its statements
 * computes in a one-row relation joined to its input, so they hold before its first row is
 * written, and a statement alone (its own transaction) commits with them: an outcome
 * write is one round trip instead of four (begin, settings, statement, commit), and in a
 * transaction of two statements the first one's settings last to the commit.
 *
 * synchronous_commit off (this transaction only): outcome writes commit without waiting
 * for their WAL flush. What a crash can lose is the last fraction of a second of outcomes:
 * those deliveries are then attempted again when their lease ends, with the same
 * webhook-id, which at-least-once delivery allows; a delivery is never lost by it.
 * tributary.outbox_filtered: the outbox rows written here (a fan-out's) were filtered by
 * the projection, so the outbox trigger may skip its lookup (migration 0700).
 */
const OUTCOME_SETTINGS = sql`set_config('synchronous_commit', 'off', true), set_config('tributary.outbox_filtered', 'on', true)`;

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
  /**
   * A fan-out's delivery not written yet (deliveryId ''): the record writes its row, created
   * at `createdAt` (its fan-out's), and sets `id`.
   */
  first?: { createdAt: Date; id?: string };
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
  if (a.first !== undefined) return (await recordAttempts(db, [{ a, next, holder }]))[0]!;
  const { rows } = await sql<{ present: boolean; moved: boolean }>`
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
    SELECT EXISTS (SELECT 1 FROM present) AS present, EXISTS (SELECT 1 FROM moved) AS moved
    FROM (SELECT ${OUTCOME_SETTINGS}) AS settings`.execute(db);
  const r = rows[0];
  return r?.moved === true ? 'held' : r?.present === true ? 'lost' : 'gone';
}

const STATE_CODE: Record<NextState['kind'], string> = { delivered: 'delivered', retry: 'retry', pending: 'pending', dead: 'dead' };

export interface RecordItem { a: AttemptRecord; next: NextState; holder: string }

/**
 * recordAttempt for many attempts at one commit (one statement for the deliveries whose
 * rows exist, one for the fan-outs' first attempts; a transaction only when both have
 * some): what lets a worker keep up under load. Same rules; outcomes in input order
 * ('held' or 'lost': a delivery deleted meanwhile counts as lost here, and its attempt is
 * not recorded). `finishedFanouts`: fan-outs whose deliveries were all written by earlier
 * commits, deleted at this one (./fanouts.ts), so finishing them costs no commit of its own.
 */
export async function recordAttempts(db: Db, items: readonly RecordItem[], finishedFanouts: readonly string[] = []): Promise<RecordOutcome[]> {
  if (items.length === 0) return [];
  const existing = items.filter((i) => i.a.first === undefined);
  const fresh = items.filter((i) => i.a.first !== undefined);
  const both = async (trx: Db) => {
    const updated = await updateAttempts(trx, existing, fresh.length === 0 ? finishedFanouts : []);
    const written = await writeFirstAttempts(trx, fresh, finishedFanouts);
    const byItem = new Map<RecordItem, RecordOutcome>();
    existing.forEach((item, i) => byItem.set(item, updated[i]!));
    fresh.forEach((item, i) => byItem.set(item, written[i]!));
    return items.map((item) => byItem.get(item)!);
  };
  return existing.length > 0 && fresh.length > 0 ? db.transaction().execute(both) : both(db);
}

/** Deletes the fan-outs as part of the statement it is put in (a data-modifying WITH runs whether read or not). */
const finishing = (ids: readonly string[]) =>
  (ids.length === 0 ? sql`` : sql`finished AS (DELETE FROM webhook_fanouts WHERE id = ANY (${[...ids]}::bigint[])),`);

/**
 * The first attempts of fan-out deliveries (./fanouts.ts): each delivery's row written as
 * the attempt left it (delivered, dead, held for a quick retry, or waiting for the slow
 * schedule or a receiver's pause) with its attempt, in one statement. A row the expansion
 * wrote meanwhile (the lease ran out) is taken over while no claim holds it; otherwise
 * 'lost', nothing recorded, as for a webhook deleted meanwhile.
 */
async function writeFirstAttempts(trx: Db, items: readonly RecordItem[], finishedFanouts: readonly string[]): Promise<RecordOutcome[]> {
  if (items.length === 0) return [];
  const input = JSON.stringify(items.map(({ a, next, holder }) => ({
    holder,
    webhook_id: a.webhookId, event_id: a.eventId, event_name: a.eventName, created_at: a.first!.createdAt.toISOString(), attempt: a.attempt,
    attempted_at: a.attemptedAt.toISOString(), status_code: a.statusCode, latency_ms: a.latencyMs, error: a.error, success: a.success,
    next: STATE_CODE[next.kind],
    lease_ms: next.kind === 'retry' ? next.leaseMs : null,
    round: next.kind === 'pending' ? next.round : null,
    delay_ms: next.kind === 'pending' ? next.delayMs : null,
  })));
  const { rows } = await sql<{ id: string; webhook_id: number; event_id: string }>`
    WITH ${finishing(finishedFanouts)} input AS (
      SELECT x.* FROM (SELECT ${OUTCOME_SETTINGS}) AS settings, json_to_recordset(${input}::json) AS x(
        holder text, webhook_id integer, event_id text, event_name text, created_at timestamptz, attempt integer, attempted_at timestamptz,
        status_code integer, latency_ms integer, error text, success boolean, next text, lease_ms integer, round integer, delay_ms integer)
    ),
    written AS (
      INSERT INTO webhook_deliveries AS d (webhook_id, event_id, event_name, payload, status, round, attempts, next_attempt_at,
        locked_until, locked_by, last_error, created_at, finished_at)
      SELECT i.webhook_id, i.event_id, i.event_name, NULL,
        CASE i.next WHEN 'delivered' THEN 'delivered' WHEN 'dead' THEN 'dead' ELSE 'pending' END,
        COALESCE(i.round, 0), 1,
        CASE WHEN i.next = 'pending' THEN now() + i.delay_ms * interval '1 millisecond' ELSE now() END,
        CASE WHEN i.next = 'retry' THEN now() + i.lease_ms * interval '1 millisecond' END,
        CASE WHEN i.next = 'retry' THEN i.holder END,
        i.error, i.created_at,
        CASE WHEN i.next IN ('delivered', 'dead') THEN now() END
      FROM input i
      WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = i.webhook_id)
      ON CONFLICT (webhook_id, event_id) DO UPDATE SET
        status = excluded.status, round = excluded.round, attempts = d.attempts + 1, next_attempt_at = excluded.next_attempt_at,
        locked_until = excluded.locked_until, locked_by = excluded.locked_by, last_error = excluded.last_error, finished_at = excluded.finished_at
      WHERE d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until < now())
      RETURNING d.id, d.webhook_id, d.event_id
    ),
    attempts AS (
      INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_name, attempt, attempted_at, status_code, latency_ms, error, success)
      SELECT w.id, i.webhook_id, i.event_id, i.event_name, i.attempt, i.attempted_at, i.status_code, i.latency_ms, i.error, i.success
      FROM input i JOIN written w ON w.webhook_id = i.webhook_id AND w.event_id = i.event_id
    )
    SELECT id::text, webhook_id, event_id FROM written`.execute(trx);
  const ids = new Map(rows.map((r) => [`${r.webhook_id}:${r.event_id}`, r.id]));
  return items.map(({ a }) => {
    const id = ids.get(`${a.webhookId}:${a.eventId}`);
    if (id === undefined) return 'lost';
    a.first!.id = id;
    return 'held';
  });
}

/** The attempts of deliveries whose rows exist (claimed, or written by an earlier attempt). */
async function updateAttempts(trx: Db, items: readonly RecordItem[], finishedFanouts: readonly string[]): Promise<RecordOutcome[]> {
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
  const { rows } = await sql<{ id: string }>`
    WITH ${finishing(finishedFanouts)} input AS (
      SELECT x.* FROM (SELECT ${OUTCOME_SETTINGS}) AS settings, json_to_recordset(${input}::json) AS x(
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
    RETURNING d.id`.execute(trx);
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

/** releaseLeases of the worker's deliveries, and those of fan-outs (not written yet) handed to the claim. */
export async function releaseHeld(db: Db, worker: string, rows: readonly ClaimedDelivery[]): Promise<void> {
  const unwritten = rows.filter((r) => r.fanout !== undefined);
  await releaseLeases(db, worker, rows.filter((r) => r.fanout === undefined).map((r) => r.id));
  if (unwritten.length === 0) return;
  await handToClaim(db, unwritten);
  for (const r of unwritten) r.fanout!.settle(true);
}
