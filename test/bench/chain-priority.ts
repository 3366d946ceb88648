/**
 * The read mix's commit load at its rate in every phase. The localnet, the pipeline
 * (indexer and projector) and the pipeline's Postgres backends do a fixed amount of work
 * a second (RATE events), but on two cores the scheduler shares time per runnable thread:
 * pgbench's 50 backends, all runnable at once, starved them to 9-50 events/s during the
 * baseline's phase, while the API phases, with a pool of a few connections, left them
 * their 200. The baseline then ran on cores the API phases had to share with the chain.
 * Raised above the load's priority, the chain takes what its rate needs in every phase
 * (each phase prints its events/s), and no more: the work is the same, only when it runs.
 *
 * Linux applies a nice value per thread, so every thread of a process is raised; the
 * backends are found by the client ports of the process's connections to Postgres
 * (pg_stat_activity.client_port), and looked up again before each phase, as pools open
 * connections over time. Needs CAP_SYS_NICE (root): without it the chain keeps the default
 * priority and the bench says so.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';

/** the chain's nice value: above every other process of the bench (0) */
const CHAIN_NICE = -10;

/** Every thread of `pid` at `nice`; false when this process may not raise it. */
function reniceThreads(pid: number, nice: number): boolean {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true; // gone (a backend that closed): nothing to raise
  }
  for (const tid of tids) {
    try {
      setPriority(Number(tid), nice);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') continue;
      return false;
    }
  }
  return true;
}

/** The local ports of `pid`'s TCP connections to `port` (from ss). */
function clientPorts(pid: number, port: number): number[] {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( dport = :${port} )`], { encoding: 'utf8' });
  const ports: number[] = [];
  for (const line of out.split('\n')) {
    if (!line.includes(`pid=${pid},`)) continue;
    const local = line.trim().split(/\s+/)[2]; // Recv-Q Send-Q Local Peer (state filtered out)
    const p = Number(local?.slice(local.lastIndexOf(':') + 1));
    if (Number.isInteger(p) && p > 0) ports.push(p);
  }
  return ports;
}

/**
 * Raises `chain` (the localnet's and the pipeline's pids) and the Postgres backends serving
 * `withBackends` above the bench's load. Returns what was raised, for the bench's output.
 */
export async function raiseChain(db: Db, chain: readonly number[], withBackends: readonly number[], pgPort = 5432): Promise<string> {
  for (const pid of chain) {
    if (!reniceThreads(pid, CHAIN_NICE)) return 'chain at default priority (no permission to raise it)';
  }
  const ports = withBackends.flatMap((pid) => clientPorts(pid, pgPort));
  const backends = ports.length === 0 ? [] : (await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity WHERE client_port = ANY(${ports}::int[])`.execute(db)).rows.map((r) => r.pid);
  for (const pid of backends) reniceThreads(pid, CHAIN_NICE);
  return `chain at nice ${CHAIN_NICE}: ${chain.length} processes, ${backends.length} Postgres backends`;
}
