/**
 * The faults of the soak, one at a time, spread over the workload by its progress (the
 * k-th of n faults fires when the chain has emitted k/(n+1) of the planned events, so the
 * schedule holds whatever rate the localnet reaches): kill -9 of every role process in
 * turn (the supervisor restarts it, as an orchestrator would), a Redis restart (on a Redis
 * Cluster: a failover and a master killed, ./redis-cluster.ts), a PostgreSQL restart, and
 * the scheduler once more. Each fault's window runs from the fault until a few seconds
 * after the process is back.
 */
import type { Cluster } from '../../infra/cluster/cluster.js';
import type { Fault } from './fault.js';
import type { PrivateServices } from './services.js';
import { redisClusterFaults, soakPrefix } from './redis-cluster.js';

export interface FaultWindow { name: string; from: number; recovered: number; to: number }

const SETTLE_MS = 3000;

export function killAndWait(cluster: Cluster, name: string): Fault {
  return {
    name: `kill -9 ${name}`,
    async run() {
      const p = cluster.procs.get(name);
      if (!p) throw new Error(`no process ${name}`);
      const exited = p.nextExit();
      p.signal('SIGKILL');
      await exited;
      await cluster.waitUp(name, 120_000);
    },
  };
}

export function faultPlan(cluster: Cluster, services: PrivateServices): Fault[] {
  const roles = [...cluster.procs.keys()].filter((n) => /^(api|projector|webhooks|notifier|indexer|scheduler)/.test(n));
  // the scheduler (due payments and the pay-as-you-go settler) is killed once more at the end, after the restarts
  const schedulers = roles.filter((n) => n.startsWith('scheduler'));
  return [
    ...roles.map((n) => killAndWait(cluster, n)),
    ...(cluster.redisCluster
      ? redisClusterFaults(cluster.redisCluster, `${soakPrefix(cluster)}events`)
      : [{ name: 'restart Redis', run: () => services.restartRedis() }]),
    { name: 'restart PostgreSQL (primary)', run: () => services.restartPostgres() },
    ...schedulers.map((n) => killAndWait(cluster, n)),
  ];
}

/** Runs the faults as progress(0..1) passes each one's mark; resolves when all have run. */
export async function runFaults(
  faults: readonly Fault[], progress: () => Promise<number>, log: (s: string) => void, deadline: number,
): Promise<FaultWindow[]> {
  const windows: FaultWindow[] = [];
  for (const [k, f] of faults.entries()) {
    const mark = (k + 1) / (faults.length + 1);
    while ((await progress().catch(() => 0)) < mark) {
      if (Date.now() > deadline) throw new Error(`the workload did not reach ${Math.round(mark * 100)}% in time for '${f.name}'`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const from = Date.now();
    log(`fault ${k + 1}/${faults.length} at ${Math.round(mark * 100)}% of the workload: ${f.name}`);
    await f.run();
    const recovered = Date.now();
    log(`  recovered in ${((recovered - from) / 1000).toFixed(1)} s`);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    windows.push({ name: f.name, from, recovered, to: recovered + SETTLE_MS });
  }
  return windows;
}
