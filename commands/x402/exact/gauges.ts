/** The exact facilitator's fee payers as Prometheus gauges, read at scrape time (one report per scrape). */
import type { Registry } from 'prom-client';
import type { Config } from '../../../src/kernel/config/config.js';
import type { Db } from '../../../infra/postgres/database.js';
import { createRpcClient } from '../../../infra/solana/rpc-client.js';
import { snapshotGauges } from '../../../infra/metrics/snapshot-gauges.js';
import { feePayerReport, type FeePayerBalance } from './report.js';

export function registerExactGauges(registry: Registry, ctx: { dbRead: Db; config: Pick<Config, 'solana' | 'x402'> }): void {
  if (registry.getSingleMetric('tributary_x402_fee_payer_lamports')) return;
  const rpc = createRpcClient({ url: ctx.config.solana.rpcUrl, timeoutMs: 2000 });
  const gauge = snapshotGauges<FeePayerBalance[]>(registry, () => feePayerReport(ctx.dbRead, rpc, ctx.config.x402.exact.feePayerMinLamports));
  gauge('tributary_x402_fee_payer_lamports', 'SOL balance of each x402 exact fee payer (lamports)', ['network', 'fee_payer', 'active'], (g, rows) => {
    for (const r of rows) if (r.lamports !== null) g.set({ network: r.network, fee_payer: r.address, active: String(r.active) }, r.lamports);
  });
  gauge('tributary_x402_fee_payer_low', '1 when the active x402 exact fee payer holds less than X402_EXACT_FEE_PAYER_MIN_LAMPORTS', ['network', 'fee_payer'], (g, rows) => {
    for (const r of rows) if (r.active) g.set({ network: r.network, fee_payer: r.address }, r.low ? 1 : 0);
  });
}
