/**
 * The scheduler's counters (migration 0997): intents by status and attempts by outcome and
 * reason, per gateway and over all gateways (gateway '*'). Triggers append each statement's
 * deltas; `foldCounts` moves them into one total row per key. Reading sums both, so it is
 * exact whether or not a fold has run, and reads a few rows whatever the tables' size.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';

export const ALL_GATEWAYS = '*';

export interface SchedulerCounts {
  /** intents as they stand, by status */
  intents: Map<string, number>;
  /** attempts ever recorded, by outcome and reason */
  attempts: Array<{ outcome: string; reasonCode: string; n: number }>;
}

/** The counts of one gateway, or of all (`ALL_GATEWAYS`): totals and pending deltas, each through its partial index. */
export async function readCounts(db: Db, gateway: string): Promise<SchedulerCounts> {
  const rows = await sql<{ kind: string; key: string; reason_code: string; n: string }>`
    SELECT kind, key, reason_code, sum(n)::text AS n FROM (
      SELECT kind, key, reason_code, n FROM scheduler_counts WHERE gateway = ${gateway} AND folded
      UNION ALL
      SELECT kind, key, reason_code, n FROM scheduler_counts WHERE gateway = ${gateway} AND NOT folded
    ) c GROUP BY kind, key, reason_code HAVING sum(n) <> 0`.execute(db);
  const counts: SchedulerCounts = { intents: new Map(), attempts: [] };
  for (const r of rows.rows) {
    if (r.kind === 'intent') counts.intents.set(r.key, Number(r.n));
    else counts.attempts.push({ outcome: r.key, reasonCode: r.reason_code, n: Number(r.n) });
  }
  return counts;
}

/** Failed attempts by reason among the outcomes `counted`, as the reports print them ('' reads as unknown). */
export function failedByReason(counts: SchedulerCounts, counted: (outcome: string) => boolean): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of counts.attempts) {
    if (!counted(a.outcome)) continue;
    const k = a.reasonCode || 'unknown';
    out[k] = (out[k] ?? 0) + a.n;
  }
  return out;
}

/**
 * Moves the pending deltas into the totals, in one statement; a fold already running
 * elsewhere makes this one a no-op. Answers how many delta rows it moved.
 */
export async function foldCounts(db: Db): Promise<number> {
  const r = await sql<{ moved: string }>`SELECT fold_scheduler_counts()::text AS moved`.execute(db);
  return Number(r.rows[0]?.moved ?? 0);
}
