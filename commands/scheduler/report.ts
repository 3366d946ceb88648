/**
 * What the scheduler and the settler are doing, for `tributary status` and /metrics: due
 * now, past due, executed, failed attempts by reason, the lag from due date to execution
 * (p50, p99, over the last day), the unsettled and the unbillable pay-as-you-go usage
 * (failed attempts include the settler's refused charges), and each served
 * gateway's signer with its SOL balance (low below SCHEDULER_SIGNER_MIN_LAMPORTS) and
 * whether its stored key opens.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { solBalance, type ChainIo } from './chain.js';
import { ALL_GATEWAYS, failedByReason, readCounts } from './counts.js';

export interface SignerReport { gateway: string; signer: string; state: string; lamports: number | null; low: boolean; signerError: string | null }

export interface SchedulerReport {
  dueNow: number;
  pastDue: number;
  executed: number;
  givenUp: number;
  failedByReason: Record<string, number>;
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  unsettledUsage: string;
  /** metered usage the chain will never be charged for (marked with its reason) */
  unbillableUsage: string;
  signers: SignerReport[];
}

/**
 * The lag from due date to execution over the last day, read from the partial index of
 * executed attempts by time (execution_attempts_lag_idx): a day's executions, not all.
 */
export const lagQuery = sql<{ p50: string | null; p99: string | null }>`
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_ms)::bigint::text AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_ms)::bigint::text AS p99
    FROM execution_attempts WHERE outcome = 'executed' AND lag_ms IS NOT NULL AND at > now() - interval '1 day'`;

export async function schedulerReport(db: Db, io: ChainIo | undefined, minLamports: number): Promise<SchedulerReport> {
  const counts = await readCounts(db, ALL_GATEWAYS);
  const n = (status: string) => counts.intents.get(status) ?? 0;
  const dueNow = await sql<{ n: string }>`SELECT count(*)::text AS n FROM execution_intents WHERE status IN ('pending', 'sending') AND next_attempt_at <= now()`.execute(db);
  const lag = await lagQuery.execute(db);
  const usage = await usageTotals(db);
  const gateways = await db.selectFrom('scheduler_gateways').select(['gateway', 'signer', 'state', 'signer_error']).where('state', '!=', 'stopped').orderBy('gateway').execute();
  const signers: SignerReport[] = [];
  for (const { signer_error: signerError, ...g } of gateways) {
    const lamports = io ? await solBalance(io, g.signer).catch(() => null) : null;
    signers.push({ ...g, lamports, low: lamports !== null && lamports < minLamports, signerError });
  }
  const l = lag.rows[0];
  return {
    dueNow: Number(dueNow.rows[0]?.n ?? 0), pastDue: n('past_due'), executed: n('executed'), givenUp: n('given_up'),
    failedByReason: failedByReason(counts, (outcome) => outcome !== 'executed' && outcome !== 'dropped'),
    lagP50Ms: l?.p50 == null ? null : Number(l.p50), lagP99Ms: l?.p99 == null ? null : Number(l.p99),
    unsettledUsage: usage.unsettled, unbillableUsage: usage.unbillable, signers,
  };
}

/**
 * The unsettled and the unbillable usage, each summed over its own partial index
 * (payg_usage_unsettled_idx, payg_usage_unbillable_idx): a scrape reads the rows still
 * open or refused for good, never the settled history. One sum with two FILTERs would read
 * the whole table on every scrape. The predicates must stay those of the indexes.
 */
export const usageTotalsQuery = sql<{ unsettled: string | null; unbillable: string | null }>`
    SELECT (SELECT sum(chunk) FROM payg_usage WHERE charge_id IS NULL AND unbillable_reason IS NULL)::text AS unsettled,
           (SELECT sum(chunk) FROM payg_usage WHERE unbillable_reason IS NOT NULL)::text AS unbillable`;

export async function usageTotals(db: Db): Promise<{ unsettled: string; unbillable: string }> {
  const row = (await usageTotalsQuery.execute(db)).rows[0];
  return { unsettled: row?.unsettled ?? '0', unbillable: row?.unbillable ?? '0' };
}

/** The report as `tributary status` prints it; a low signer balance is a WARNING line. */
export function reportLines(r: SchedulerReport): string[] {
  const failed = Object.entries(r.failedByReason).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  const lines = [
    `scheduler  due now ${r.dueNow}  past due ${r.pastDue}  executed ${r.executed}  given up ${r.givenUp}  lag p50 ${r.lagP50Ms ?? '-'} ms  p99 ${r.lagP99Ms ?? '-'} ms`,
    `scheduler  failed attempts by reason: ${failed}`,
    `settler    unsettled pay-as-you-go usage ${r.unsettledUsage}  unbillable ${r.unbillableUsage}`,
  ];
  for (const s of r.signers) {
    const sol = s.lamports === null ? 'balance unknown' : `${(s.lamports / 1e9).toFixed(4)} SOL`;
    lines.push(`${s.low ? 'WARNING ' : ''}signer     ${s.gateway} ${s.state} ${s.signer} ${sol}${s.low ? ' (below SCHEDULER_SIGNER_MIN_LAMPORTS: fees will fail)' : ''}`);
    if (s.signerError) lines.push(`ERROR   signer     ${s.gateway} does not open, its payments and settlement wait: ${s.signerError}`);
  }
  return lines;
}
