/**
 * Retention: delivered and dead deliveries (their attempts go with them, FK cascade) are
 * deleted once finished more than WEBHOOK_RETENTION_DAYS ago (application clock); a
 * delivery finishes after it was created, so created_at (BRIN-indexed) narrows the search. Small
 * batches, each its own short statement that skips rows another worker holds, with a
 * pause between them: delivery never waits on pruning, and every worker may prune. Then
 * the event payloads stored once per event (webhook_events) that no delivery uses any more.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';

const DAY_MS = 86_400_000;
export const PRUNE_BATCH = 1000;

/** Deletes one batch of finished deliveries older than the cutoff; the number deleted. */
export async function pruneBatch(db: Db, cutoff: Date, limit = PRUNE_BATCH): Promise<number> {
  const r = await sql`
    DELETE FROM webhook_deliveries WHERE id IN (
      SELECT id FROM webhook_deliveries
      WHERE created_at < ${cutoff} AND status <> 'pending' AND finished_at < ${cutoff}
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * Deletes one batch of stored event payloads (webhook_events) older than the cutoff that
 * no delivery uses any more; the number deleted. A delivery's rows are found through the
 * webhooks the event was queued for and the outbox's (webhook_id, event_id) key; an event
 * still fanned out (./fanouts.ts: its rows not written yet) is kept (the fan-outs are the
 * backlog, few: read once per statement).
 */
export async function pruneEventsBatch(db: Db, cutoff: Date, limit = PRUNE_BATCH): Promise<number> {
  const r = await sql`
    DELETE FROM webhook_events WHERE event_id IN (
      SELECT e.event_id FROM webhook_events e
      WHERE e.created_at < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = ANY (e.webhook_ids) AND d.event_id = e.event_id)
        AND e.event_id NOT IN (SELECT f.event_id FROM webhook_fanouts f)
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Prunes until nothing is left to prune (pausing between batches): deliveries, then the payloads they left; the number of deliveries deleted. */
export async function pruneAll(db: Db, retentionDays: number, nowMs: number, pauseMs = 50): Promise<number> {
  const cutoff = new Date(nowMs - retentionDays * DAY_MS);
  const drain = async (batch: (db: Db, cutoff: Date) => Promise<number>): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await batch(db, cutoff);
      total += n;
      if (n < PRUNE_BATCH) return total;
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  const deliveries = await drain(pruneBatch);
  await drain(pruneEventsBatch);
  return deliveries;
}

export interface Pruner { stop(): Promise<void> }

export function startPruner(deps: { db: Db; logger: Logger; now: () => number }, cfg: { retentionDays: number; intervalMs: number }): Pruner {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = pruneAll(deps.db, cfg.retentionDays, deps.now())
      .then((n) => { if (n > 0) deps.logger.info({ deleted: n }, 'pruned old webhook deliveries'); })
      .catch((err: unknown) => deps.logger.warn({ err: (err as Error).message }, 'pruning webhook deliveries failed; next time'))
      .finally(() => { if (!stopped) timer = setTimeout(tick, cfg.intervalMs); });
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(tick, cfg.intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
