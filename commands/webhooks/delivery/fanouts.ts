/**
 * Fan-out rows (migration 0996, src/kernel/wire/webhook-ready.ts): a pushed event's first
 * attempts, one row for all its webhooks. A worker that popped the event holds each
 * delivery unwritten while its first attempt runs; the outbox row is written with the
 * attempt's outcome (./outbox-store.ts recordAttempts), and the fan-out deleted once every
 * one of its deliveries is written. So a first attempt costs the database two inserts
 * (the delivery as it ends, its attempt) instead of an insert, a claim and an update.
 *
 * What is never lost: a fan-out stays until all its deliveries are written. One whose lease
 * ended (its worker died, its push was lost, its records failed) is expanded by any worker
 * into due outbox rows for the webhooks that have none yet (the (webhook_id, event_id) key),
 * and the ordinary claim takes them with the same webhook-id: at least once, as always.
 * A worker's outcome that comes after such an expansion takes the expanded row over while
 * no claim holds it, so the delivery is not made again.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';

/** One fan-out as its worker tracks it: deliveries not written yet. */
export interface FanoutHold {
  readonly id: string;
  /** a delivery of it is written (ok) or its record failed (the fan-out then stays for the expansion) */
  settle(ok: boolean): void;
}

export function holdFanout(id: string, deliveries: number, done: (id: string) => void): FanoutHold {
  let left = deliveries;
  let broken = false;
  return {
    id,
    settle(ok) {
      if (!ok) broken = true;
      left -= 1;
      if (left === 0 && !broken) done(id);
    },
  };
}

/** A delivery of a fan-out handed to the claim instead of attempted here. */
export interface Unattempted { webhook_id: number; event_id: string; event_name: string; created_at: Date }

/**
 * Writes due outbox rows (in `delayMs`) for deliveries of fan-outs not attempted here (an
 * endpoint paused or changed since queueing, a worker stopping, a rate limit): the claim
 * takes them. A delivery whose row exists already, or whose webhook is gone, is skipped.
 */
export async function handToClaim(db: Db, rows: readonly Unattempted[], delayMs = 0): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload, created_at, next_attempt_at)
    SELECT i.webhook_id, i.event_id, i.event_name, NULL, i.created_at, now() + ${delayMs} * interval '1 millisecond'
    FROM unnest(${rows.map((r) => r.webhook_id)}::integer[], ${rows.map((r) => r.event_id)}::text[],
      ${rows.map((r) => r.event_name)}::text[], ${rows.map((r) => r.created_at.toISOString())}::timestamptz[])
      AS i(webhook_id, event_id, event_name, created_at)
    WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = i.webhook_id)
    ON CONFLICT (webhook_id, event_id) DO NOTHING`.execute(db);
}

/**
 * Expands up to `limit` fan-outs whose lease ended into due outbox rows (for the webhooks
 * with none yet, still registered) and deletes them, in one statement; SKIP LOCKED between
 * workers. The number of fan-outs expanded.
 */
export async function expandExpired(db: Db, limit = 1000): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    WITH gone AS (
      DELETE FROM webhook_fanouts WHERE id IN (
        SELECT id FROM webhook_fanouts WHERE lease_until < now() ORDER BY lease_until LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id, event_id, event_name, webhook_ids, created_at
    ),
    expanded AS (
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload, created_at)
      SELECT w.id, g.event_id, g.event_name, NULL, g.created_at
      FROM gone g CROSS JOIN LATERAL unnest(g.webhook_ids) WITH ORDINALITY AS w(id, n)
      WHERE EXISTS (SELECT 1 FROM webhooks h WHERE h.id = w.id)
      ORDER BY g.id, w.n
      ON CONFLICT (webhook_id, event_id) DO NOTHING
    )
    SELECT count(*)::text AS n FROM gone`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Extends the lease of fan-outs popped late (the workers fell behind), while they are
 * still there (not expanded meanwhile). The ids it now holds.
 */
export async function extendFanouts(db: Db, ids: readonly string[], leaseMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    UPDATE webhook_fanouts SET lease_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = ANY (${[...ids]}::bigint[]) AND lease_until > now()
    RETURNING id::text`.execute(db);
  return new Set(rows.map((r) => r.id));
}

export interface FanoutFinisher {
  /** the fan-out's deliveries are all written: delete it (with the next outcome write, or on its own shortly) */
  done(id: string): void;
  /** the fan-outs waiting to be deleted, for an outcome write to delete them (./outbox-store.ts recordAttempts) */
  take(): string[];
  /** fan-outs taken whose delete failed with their write: deleted on their own instead */
  requeue(ids: readonly string[]): void;
  /** resolves when every fan-out handed to done is deleted (or failed to be) */
  flush(): Promise<void>;
}

/** How long a finished fan-out waits for an outcome write to delete it before it is deleted on its own. */
const FINISH_ALONE_MS = 50;

/**
 * Deletes finished fan-outs: under load, with the next outcome write (the recorder takes
 * them), so no commit is spent on them; idle, on their own after FINISH_ALONE_MS, in
 * groups. A delete that fails leaves them to the expansion, which finds their rows
 * written and writes none.
 */
export function createFanoutFinisher(db: Db): FanoutFinisher {
  let queue: string[] = [];
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const drain = async () => {
    while (queue.length > 0) {
      const ids = queue;
      queue = [];
      // its own transaction, committed as the outcomes are (synchronous_commit off)
      await sql`DELETE FROM webhook_fanouts USING (SELECT set_config('synchronous_commit', 'off', true)) AS settings WHERE id = ANY (${ids}::bigint[])`
        .execute(db).catch(() => undefined);
    }
  };
  const kick = () => {
    if (running) return;
    running = drain().finally(() => { running = undefined; if (queue.length > 0) kick(); });
  };
  const later = () => {
    if (timer) return;
    timer = setTimeout(() => { timer = undefined; kick(); }, FINISH_ALONE_MS);
  };
  return {
    done(id) {
      queue.push(id);
      later();
    },
    take() {
      const ids = queue;
      queue = [];
      return ids;
    },
    requeue(ids) {
      queue.push(...ids);
      later();
    },
    async flush() {
      if (timer) { clearTimeout(timer); timer = undefined; }
      kick();
      while (running) await running;
    },
  };
}
