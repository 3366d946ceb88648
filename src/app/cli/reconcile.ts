/**
 * `tributary reconcile [--gateway G] [--since T] [--json]`: the chain against the
 * service's ledgers (queries/reconciliation), run from the database, Redis and RPC of the
 * configuration, for one gateway or every gateway the service serves. A table by default,
 * the route's JSON with --json. Exit code 0 when chain and ledgers agree, 3 when
 * differences were found (a cron job's alarm), 1 on an error such as a bad --since.
 */
import { createRpcClient } from '../../../infra/solana/rpc-client.js';
import { reconcile, type Reconciliation } from '../../../queries/reconciliation/reconcile.js';
import { parseSince } from '../../../queries/reconciliation/routes.js';
import { closeContext } from '../build-context.js';
import type { ExtraCommand } from './command.js';
import { contextFor, loadConfigOrExit } from './process.js';
import { reconcileDeps } from '../reconciliation.js';

export const DIFFERENCES_EXIT_CODE = 3;

export function reconciliationTable(r: Reconciliation): string[] {
  const head = `reconciled ${r.gateways.length} gateway(s) since ${new Date(r.since * 1000).toISOString()}: ${r.policies} policies, ${r.payments} chain payments, ${r.records} service records`;
  const counts = `differences: ${r.differences.length} (${Object.entries(r.counts).map(([c, n]) => `${c} ${n}`).join(', ')})`;
  if (r.differences.length === 0) return [head, counts];
  const rows = r.differences.map((d) => [d.cause, d.source, d.policy, d.serviceAmount ?? '-', d.chainAmount ?? '-', d.signatures.join(',') || '-', d.detail]);
  const titles = ['CAUSE', 'SOURCE', 'POLICY', 'SERVICE', 'CHAIN', 'SIGNATURES', 'DETAIL'];
  const widths = titles.map((t, i) => Math.max(t.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [head, counts, '', line(titles), ...rows.map(line)];
}

export const reconcileCommand: ExtraCommand = {
  usage: 'reconcile',
  summary: 'compare the chain with the service\'s ledgers and list every difference (--gateway G, --since <time>, --json)',
  async run(args, env) {
    const gateway = args.flags.get('gateway')?.[0];
    if (gateway !== undefined && !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(gateway)) throw new Error(`--gateway must be a gateway account address, not '${gateway}'`);
    const ctx = contextFor(loadConfigOrExit(env), 'reconcile');
    try {
      const deps = reconcileDeps(ctx, createRpcClient({ url: ctx.config.solana.rpcUrl, timeoutMs: ctx.config.solana.rpcTimeoutMs }));
      const since = parseSince(args.flags.get('since')?.[0], deps.nowMs());
      const r = await reconcile(deps, { ...(gateway !== undefined ? { gateway } : {}), since });
      process.stdout.write(`${args.flags.has('json') ? JSON.stringify(r, null, 2) : reconciliationTable(r).join('\n')}\n`);
      if (r.differences.length > 0) process.exitCode = DIFFERENCES_EXIT_CODE;
    } finally {
      await closeContext(ctx);
    }
  },
};
