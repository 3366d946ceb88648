/**
 * One reconciliation run: for each gateway, read the chain as indexed and the service's
 * ledgers (ledgers.ts), ask the chain itself about each transaction the index does not
 * settle and about every policy account involved (chain.ts), compare (compare.ts), and
 * publish the counts for /metrics. Cost: one getMultipleAccounts per 100 policies and one
 * getTransaction batch per 50 unmatched signatures, besides the Postgres reads.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import { policyAccounts, transactionFacts, type ChainDeps } from './chain.js';
import { compare, countByCause, type Cause, type Difference } from './compare.js';
import * as ledgers from './ledgers.js';
import { publishCounts } from './published.js';
import { uptoRecords } from './upto.js';

export interface ReconcileDeps {
  db: Db;
  redis: Redis;
  redisPrefix: string;
  chain: ChainDeps;
  nowMs: () => number;
  /** metered usage older than this and in no charge counts as lost */
  unsettledBoundMs: number;
}

export interface Reconciliation {
  gateways: string[];
  /** unix seconds: records and payments from this time on were compared */
  since: number;
  /** unix milliseconds */
  ranAt: number;
  policies: number;
  payments: number;
  records: number;
  counts: Record<Cause, number>;
  differences: Difference[];
}

export async function reconcile(deps: ReconcileDeps, opts: { gateway?: string; since: number }): Promise<Reconciliation> {
  const gateways = opts.gateway !== undefined ? [opts.gateway] : await ledgers.servedGateways(deps.db);
  const runs = [];
  for (const gateway of gateways) runs.push(await reconcileGateway(deps, gateway, opts.since));
  const differences = runs.flatMap((r) => r.differences);
  const result: Reconciliation = {
    gateways, since: opts.since, ranAt: deps.nowMs(),
    policies: sum(runs.map((r) => r.policies)), payments: sum(runs.map((r) => r.payments)), records: sum(runs.map((r) => r.records)),
    counts: countByCause(differences), differences,
  };
  await publishCounts(deps.redis, deps.redisPrefix, runs.map((r) => ({ gateway: r.gateway, counts: countByCause(r.differences) })), result.ranAt);
  return result;
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

async function reconcileGateway(deps: ReconcileDeps, gateway: string, since: number) {
  const { db } = deps;
  const inWindow = await ledgers.chainPayments(db, gateway, since);
  const records = [
    ...await ledgers.serviceRecords(db, gateway, since, inWindow.map((p) => p.signature)),
    ...await uptoRecords(db, deps.redis, deps.redisPrefix, gateway, since),
  ];
  // a record of the window whose payment was indexed just before it
  const seen = new Set(inWindow.map((p) => p.signature));
  const payments = [...inWindow, ...await ledgers.chainPayments(db, gateway, since, records.map((r) => r.signature).filter((x) => !seen.has(x)))];
  const usage = await ledgers.usageGaps(db, gateway, since, new Date(deps.nowMs() - deps.unsettledBoundMs));
  const prepaid = await ledgers.prepaidDraws(db, gateway);
  const touched = [...new Set([...payments.map((p) => p.policy), ...records.map((r) => r.policy)])];
  const policies = await ledgers.indexedPolicies(db, gateway, touched);
  const accounts = await policyAccounts(deps.chain, policies.map((p) => p.address));
  const periodTotals = new Map<string, bigint>();
  for (const p of policies) {
    const period = accounts.get(p.address)?.period;
    if (period) periodTotals.set(p.address, await ledgers.indexedTotalSince(db, p.address, p.createdSlot, period.start));
  }
  // the chain is asked only about what the index cannot settle: a payment no record names
  // (who signed it), a record with no indexed payment (did it land, what did it take)
  const named = new Set(records.map((r) => r.signature));
  const paid = new Set(payments.map((p) => p.signature));
  const txs = await transactionFacts(deps.chain, [...payments.filter((p) => !named.has(p.signature)).map((p) => p.signature), ...records.filter((r) => !paid.has(r.signature)).map((r) => r.signature)]);
  const signer = await ledgers.serviceSigner(db, gateway);
  const differences = compare({ gateway, signer, payments, records, txs, usage, prepaid, policies, accounts, periodTotals });
  return { gateway, differences, policies: policies.length, payments: payments.length, records: records.length };
}
