/**
 * `BENCH_X402_PROFILE=1 run.ts x402`: the cost of each bearer route per request rather than its
 * throughput (which a shared machine makes noise of). wrk, a process of its own, drives each route;
 * this process's CPU (the API node: process.cpuUsage) and its Postgres statements and Redis
 * round trips (a pipeline is one) are counted over the run and divided by the requests answered.
 * The main thread's busy time (its event loop utilization) is counted alike: a route is bound by it, not by
 * the process's CPU, which also counts the garbage collector's and libuv's threads; its idle share is time
 * every connection's request was waiting on Redis or Postgres.
 * BENCH_X402_CPU_PROFILE=<dir> also writes a CPU profile of each route's run there (x402-<route>.cpuprofile),
 * BENCH_X402_HEAP=<dir> a sampling heap profile of what each run allocated (x402-<route>.heapprofile,
 * collected objects included: what the garbage collector is made to do).
 * The other processes the two cores are shared with are counted alike: the Postgres backends
 * of the bench's database (/proc), the Redis server (INFO cpu: the whole server, other users'
 * work included) and wrk itself (its children's times), so that a ratio the API alone cannot
 * reach shows where the rest of a request's CPU goes.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import pg from '../../infra/postgres/pg.js';

export interface ProfileTarget { url: string; headers: Record<string, string> }

let statements = 0;
let commands = 0;

function countRoundTrips(redis: Redis): void {
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function counted(this: unknown, ...a: unknown[]) { statements += 1; return query.apply(this, a); };
  const send = redis.sendCommand.bind(redis);
  // a pipeline's commands share one write (its stream): one round trip
  const pipelines = new WeakSet<object>();
  redis.sendCommand = ((...a: Parameters<Redis['sendCommand']>) => {
    const stream = a[1] as object | undefined;
    if (!stream || !pipelines.has(stream)) commands += 1;
    if (stream) pipelines.add(stream);
    return send(...a);
  });
}

/** CPU µs of a process from /proc (utime + stime, in clock ticks of 10 ms); 0 once it is gone. */
function procCpuUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}

/** The CPU µs spent so far by the bench database's Postgres backends and by the Redis server. */
async function serverCpu(db: Db, database: string, redis: Redis): Promise<{ pg: Map<number, number>; redis: number }> {
  const pids = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = ${database}`.execute(db);
  const pg = new Map(pids.rows.map((r) => [r.pid, procCpuUs(r.pid)]));
  const info = await redis.info('cpu');
  const used = (name: string): number => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return { pg, redis: (used('used_cpu_user') + used('used_cpu_sys')) * 1e6 };
}

export async function profileX402(targets: Record<string, ProfileTarget>, redis: Redis, server?: { db: Db; database: string }): Promise<void> {
  const seconds = Number(process.env['BENCH_X402_SECONDS'] ?? 4);
  const connections = Number(process.env['BENCH_X402_CONNECTIONS'] ?? 32);
  countRoundTrips(redis);
  for (const t of Object.values(targets)) await wrk(t, 1, connections);
  await new Promise((r) => setTimeout(r, 200));
  const only = process.env['BENCH_X402_ROUTES']?.split(',');
  for (const [name, t] of Object.entries(targets).filter(([n]) => !only || only.includes(n))) {
    // what the process spends with no request (the in-process localnet, timers), taken out of the figure
    const idle0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 2000));
    const idle = process.cpuUsage(idle0);
    const idlePerSecond = (idle.user + idle.system) / 2;
    const dir = process.env['BENCH_X402_CPU_PROFILE'];
    const session = dir ? new Session() : undefined;
    const heap = process.env['BENCH_X402_HEAP'] ? new Session() : undefined;
    if (heap) { heap.connect(); await heap.post('HeapProfiler.enable'); await heap.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }); }
    if (session) { session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.start'); }
    const before = server ? await serverCpu(server.db, server.database, redis) : undefined;
    const [s0, c0, cpu0, t0, elu0] = [statements, commands, process.cpuUsage(), Date.now(), performance.eventLoopUtilization()];
    const { requests: n, cpuUs: wrkUs, latency } = await wrk(t, seconds, connections);
    const [s1, c1, elu] = [statements, commands, performance.eventLoopUtilization(elu0)];
    if (heap) { const { profile } = await heap.post('HeapProfiler.stopSampling'); writeFileSync(`${process.env['BENCH_X402_HEAP']}/x402-${name}.heapprofile`, JSON.stringify(profile)); heap.disconnect(); }
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(`${dir}/x402-${name}.cpuprofile`, JSON.stringify(profile));
      session.disconnect();
    }
    await new Promise((r) => setTimeout(r, 100));
    const cpu = process.cpuUsage(cpu0);
    const us = (cpu.user + cpu.system - idlePerSecond * ((Date.now() - t0) / 1000)) / n;
    let others = `, wrk ${(wrkUs / n).toFixed(1)} µs (latency ${latency})`;
    if (server && before) {
      const after = await serverCpu(server.db, server.database, redis);
      // a backend that left meanwhile is not counted; one that came counts from 0
      let pgUs = 0;
      for (const [pid, us1] of after.pg) pgUs += us1 - (before.pg.get(pid) ?? 0);
      others += `, Postgres backends ${(pgUs / n).toFixed(1)} µs, Redis server ${((after.redis - before.redis) / n).toFixed(1)} µs`;
    }
    process.stdout.write(`  ${name}: ${n} requests (${(n / seconds).toFixed(0)}/s), API CPU ${us.toFixed(1)} µs a request (idle ${(idlePerSecond / 1000).toFixed(0)} ms/s taken out), main thread busy ${((elu.active * 1000) / n).toFixed(1)} µs a request (utilization ${(elu.utilization * 100).toFixed(0)}%)${others}; Postgres ${((s1 - s0) / n).toFixed(3)} statements, Redis ${((c1 - c0) / n).toFixed(3)} round trips a request\n`);
  }
}

/** wrk in a child process without blocking this one (the API answers meanwhile); its requests and its CPU µs (a shell's `times`). */
async function wrk(t: ProfileTarget, seconds: number, connections: number): Promise<{ requests: number; cpuUs: number; latency: string }> {
  const headers = Object.entries(t.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const child = spawn('bash', ['-c', 'wrk "$@"; times', 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, ...headers, t.url]);
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  await new Promise((r) => child.on('exit', r));
  const m = /(\d+) requests in/.exec(out);
  if (!m) throw new Error(`wrk gave no count: ${out}`);
  if (/Non-2xx/.test(out)) process.stdout.write(`  warning: non-2xx answers\n${out}`);
  // `times`: the shell's user and system time, then its children's (wrk's)
  const times = out.split('\n').filter((l) => /^\d+m[\d.]+s \d+m[\d.]+s$/.test(l)).join(' ')
    .split(' ').map((x) => /^(\d+)m([\d.]+)s$/.exec(x)).map((x) => (x ? (Number(x[1]) * 60 + Number(x[2])) * 1e6 : 0));
  return { requests: Number(m[1]), cpuUs: (times[2] ?? 0) + (times[3] ?? 0), latency: /Latency\s+(\S+)/.exec(out)?.[1] ?? '?' };
}
