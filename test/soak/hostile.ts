/**
 * The soak on a hostile chain and a loaded machine: the localnet's faults (which were on,
 * how many of each were injected, read from its `tributary_getFaults`), a CPU hog beside
 * the run, and two checks after the drain: the operators' reconciliation over every served
 * gateway finds no difference, and the merchant model was replayed over reused policy
 * addresses (a user payment deleted and created again restarts its policy ids).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { reconcile } from '../../queries/reconciliation/reconcile.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { rpcCall } from '../support/localnet-process.js';
import type { Check } from './checks.js';

export interface FaultCounts { faults: string; seed: string; counts: Record<string, number> }

export async function faultCounts(rpcUrl: string): Promise<FaultCounts> {
  const r = await rpcCall<{ faults: string; seed: string; counts: Record<string, number> }>(rpcUrl, 'tributary_getFaults');
  return { faults: r.faults, seed: r.seed, counts: r.counts };
}

export const describeInjected = (f: FaultCounts | undefined): string => (f === undefined ? 'unknown (the localnet did not answer)'
  : `${f.faults} (seed ${f.seed}); injected ${Object.keys(f.counts).length ? Object.entries(f.counts).map(([k, n]) => `${k} ${n}`).join(', ') : 'none'}`);

/** A process that keeps one core busy for the whole run: stress-ng when installed, else a node busy loop. */
export function startCpuHog(): { what: string; stop(): void } {
  const stressNg = ['/usr/bin/stress-ng', '/usr/local/bin/stress-ng'].find((p) => existsSync(p));
  const child: ChildProcess = stressNg
    ? spawn(stressNg, ['--cpu', '1', '--timeout', '0'], { stdio: 'ignore' })
    : spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
  return {
    what: `${stressNg ? 'stress-ng --cpu 1' : "node -e 'for(;;){}'"} (pid ${child.pid}), one core busy for the whole run`,
    stop: () => { child.kill('SIGKILL'); },
  };
}

/** The operators' reconciliation over every served gateway, everything since the chain began; usage in no charge counts as lost at once. */
export async function reconciliationCheck(db: Db, redis: Redis, rpcUrl: string, redisPrefix = 'tributary:'): Promise<Check> {
  const r = await reconcile({
    db, redis, redisPrefix, chain: { rpc: createRpcClient({ url: rpcUrl, timeoutMs: 30_000 }), programId: PROGRAM_ID, commitment: 'confirmed' },
    nowMs: () => Date.now(), unsettledBoundMs: 0,
  }, { since: 0 });
  const n = r.differences.length;
  return {
    name: 'reconciliation: no difference', ok: n === 0 && r.gateways.length > 0 && r.records > 0,
    detail: `${r.gateways.length} served gateways, ${r.policies} policies, ${r.payments} chain payments, ${r.records} service records; differences ${n} ${JSON.stringify(r.counts)}${n ? `: ${r.differences.slice(0, 4).map((d) => `${d.cause} ${d.source} ${d.policy} (${d.detail})`).join('; ')}` : ''}`,
  };
}

/** Policy addresses the program named twice in the ledger (a user payment deleted and created again), and at another gateway. */
export function reusedAddresses(ledger: readonly TributaryEvent[]): { reused: number; movedGateway: number; userPaymentsDeleted: number } {
  const pda = createPdaDeriver(PROGRAM_ID);
  const gatewaysOf = new Map<string, string[]>();
  let userPaymentsDeleted = 0;
  for (const e of ledger) {
    if (e.name === 'UserPaymentDeleted') userPaymentsDeleted += 1;
    if (e.name !== 'PaymentPolicyCreated') continue;
    const a = pda.paymentPolicy(e.data.user_payment, e.data.policy_id);
    gatewaysOf.set(a, [...gatewaysOf.get(a) ?? [], e.data.gateway]);
  }
  const twice = [...gatewaysOf.values()].filter((g) => g.length > 1);
  return { reused: twice.length, movedGateway: twice.filter((g) => new Set(g).size > 1).length, userPaymentsDeleted };
}

/** The merchant model's replay check counts only when the ledger reused policy addresses. */
export function addressReuseCheck(ledger: readonly TributaryEvent[], merchantEqual: boolean | undefined): Check {
  const r = reusedAddresses(ledger);
  return {
    name: 'merchant model = replay over reused policy addresses', ok: merchantEqual === true && r.reused > 0,
    detail: `${r.userPaymentsDeleted} user payments deleted; ${r.reused} policy addresses created twice or more (${r.movedGateway} at another gateway); the merchant read model ${merchantEqual === undefined ? 'was not checked' : merchantEqual ? 'equals' : 'DIFFERS from'} its replay`,
  };
}
