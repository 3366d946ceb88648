/** The scheduler report as Prometheus gauges, read at scrape time (one report per scrape). */
import type { Registry } from 'prom-client';
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { snapshotGauges } from '../../infra/metrics/snapshot-gauges.js';
import { chainIo } from './chain.js';
import { schedulerReport, type SchedulerReport } from './report.js';

export function registerSchedulerGauges(registry: Registry, ctx: { dbRead: Db; config: Pick<Config, 'solana' | 'scheduler'> }): void {
  if (registry.getSingleMetric('tributary_scheduler_due')) return;
  const { solana } = ctx.config;
  const io = chainIo(createRpcClient({ url: solana.rpcUrl, timeoutMs: 2000 }), solana.programId, solana.commitment);
  const gauge = snapshotGauges<SchedulerReport>(registry, () => schedulerReport(ctx.dbRead, io, ctx.config.scheduler.signerMinLamports));
  gauge('tributary_scheduler_due', 'scheduled payments due now and not executed yet', [], (g, r) => g.set(r.dueNow));
  gauge('tributary_scheduler_past_due', 'payments waiting on the dunning schedule', [], (g, r) => g.set(r.pastDue));
  gauge('tributary_scheduler_executed', 'scheduled payments executed', [], (g, r) => g.set(r.executed));
  gauge('tributary_scheduler_failed', 'failed execution attempts by reason', ['reason'], (g, r) => {
    for (const [reason, n] of Object.entries(r.failedByReason)) g.set({ reason }, n);
  });
  gauge('tributary_scheduler_lag_ms', 'due date to execution over the last day', ['quantile'], (g, r) => {
    if (r.lagP50Ms !== null) g.set({ quantile: '0.5' }, r.lagP50Ms);
    if (r.lagP99Ms !== null) g.set({ quantile: '0.99' }, r.lagP99Ms);
  });
  gauge('tributary_payg_unbillable', 'metered pay-as-you-go usage the chain refused for good, marked with its reason (smallest units)', [], (g, r) => g.set(Number(r.unbillableUsage)));
  gauge('tributary_payg_unsettled', 'metered pay-as-you-go usage not charged yet (smallest units)', [], (g, r) => g.set(Number(r.unsettledUsage)));
  gauge('tributary_scheduler_signer_lamports', 'SOL balance of each served gateway\'s signer', ['gateway', 'signer'], (g, r) => {
    for (const s of r.signers) if (s.lamports !== null) g.set({ gateway: s.gateway, signer: s.signer }, s.lamports);
  });
  gauge('tributary_scheduler_signer_unreadable', '1 when a gateway\'s stored signer key does not open (its payments and settlement wait)', ['gateway'], (g, r) => {
    for (const s of r.signers) g.set({ gateway: s.gateway }, s.signerError ? 1 : 0);
  });
  gauge('tributary_scheduler_signer_low', '1 when a signer holds less than SCHEDULER_SIGNER_MIN_LAMPORTS', ['gateway'], (g, r) => {
    for (const s of r.signers) g.set({ gateway: s.gateway }, s.low ? 1 : 0);
  });
}
