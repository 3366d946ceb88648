/**
 * `BENCH_X402_PROFILE=1 run.ts x402`: the cost of each bearer route per request rather than its
 * throughput (which a shared machine makes noise of). wrk, a process of its own, drives each route;
 * this process's CPU (the API node: process.cpuUsage) and its Postgres statements and Redis
 * round trips (a pipeline is one) are counted over the run and divided by the requests answered.
 * BENCH_X402_CPU_PROFILE=<dir> also writes a CPU profile of each route's run there (x402-<route>.cpuprofile).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
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

export async function profileX402(targets: Record<string, ProfileTarget>, redis: Redis): Promise<void> {
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
    if (session) { session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.start'); }
    const [s0, c0, cpu0, t0] = [statements, commands, process.cpuUsage(), Date.now()];
    const n = await wrk(t, seconds, connections);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(`${dir}/x402-${name}.cpuprofile`, JSON.stringify(profile));
      session.disconnect();
    }
    await new Promise((r) => setTimeout(r, 100));
    const cpu = process.cpuUsage(cpu0);
    const us = (cpu.user + cpu.system - idlePerSecond * ((Date.now() - t0) / 1000)) / n;
    process.stdout.write(`  ${name}: ${n} requests, API CPU ${us.toFixed(1)} µs a request (idle ${(idlePerSecond / 1000).toFixed(0)} ms/s taken out), Postgres ${((statements - s0) / n).toFixed(3)} statements, Redis ${((commands - c0) / n).toFixed(3)} round trips a request\n`);
  }
}

/** wrk in a child process without blocking this one (the API answers meanwhile). */
async function wrk(t: ProfileTarget, seconds: number, connections: number): Promise<number> {
  const headers = Object.entries(t.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, ...headers, t.url]);
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  await new Promise((r) => child.on('exit', r));
  const m = /(\d+) requests in/.exec(out);
  if (!m) throw new Error(`wrk gave no count: ${out}`);
  if (/Non-2xx/.test(out)) process.stdout.write(`  warning: non-2xx answers\n${out}`);
  return Number(m[1]);
}
