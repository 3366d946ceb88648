/**
 * The benchmark harness: each bench measures a figure and its baseline in the same run
 * and reports their ratio (machines differ; ratios travel). Run with `make bench`.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import { bumpReadVersions, type ReadVersionKeys } from '../../infra/cache/read-cache.js';
import type { Db } from '../../infra/postgres/database.js';

export interface Figure { name: string; value: number; unit: string; baseline?: { name: string; value: number }; goal?: number; higherIsBetter?: boolean }

export function report(f: Figure): void {
  const v = `${f.value.toFixed(f.value < 10 ? 2 : 0)} ${f.unit}`;
  if (!f.baseline) { process.stdout.write(`  ${f.name}: ${v}\n`); return; }
  const ratio = (f.higherIsBetter ?? true) ? f.value / f.baseline.value : f.baseline.value / f.value;
  const goal = f.goal === undefined ? '' : ratio >= f.goal ? `  (goal ≥ ${f.goal}: met)` : `  (goal ≥ ${f.goal}: NOT met)`;
  process.stdout.write(`  ${f.name}: ${v} vs ${f.baseline.name} ${f.baseline.value.toFixed(0)} ${f.unit} → ratio ${ratio.toFixed(2)}${goal}\n`);
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const t = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, result };
}

/**
 * A CHECKPOINT before a write phase, its baseline's as well as the measured one's: the WAL
 * a phase before it wrote (max_wal_size reached, or nearly) is otherwise flushed by a
 * checkpoint spread over the next phase, and which phase pays for it is chance. Measured
 * on the live archive, 100k events after the insert limit's 10 s of pgbench: 22.0k and
 * 30.1k events/s without it, 30.7k and 31.1k with it. Skipped where the role may not.
 */
export async function settleWal(db: Db): Promise<void> {
  await sql`CHECKPOINT`.execute(db).catch(() => undefined);
}

export interface HttpLoad { rps: number; p50: number; p99: number; errors: number; non2xx: number }

/**
 * HTTP load from a worker thread: the API node under test usually runs in this process,
 * and a load generator sharing its event loop would be measured along with it.
 */
export async function httpLoad(url: string, connections: number, seconds: number, headers: Record<string, string> = {}): Promise<HttpLoad> {
  const r = await autocannon({ url, connections, duration: seconds, headers, workers: 1 });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

/**
 * Runs `fn` while a read model's versions move `perSecond` times a second, as the commits
 * of a live projection move them, each one as a commit that touches every key (the worst
 * case for the measured answer): every bump expires the API nodes' cached answers of it.
 */
export async function withCommits<T>(redis: Redis, keys: ReadVersionKeys, readModel: string, perSecond: number, fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => { void bumpReadVersions(redis, keys, readModel); }, 1000 / perSecond);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/**
 * An API route against pgbench on the SQL it runs, at 50 connections: the route as
 * configured (read cache on), the same while its read models commit 20 times a second,
 * and with the read cache off (every request queries Postgres). The goal is checked on
 * the second figure, the steady state of a live service.
 */
export async function routeVsPgbench(o: {
  name: string; url: string; sql: string; dbUrl: string; redis: Redis;
  /** the read model the route reads (its commits expire the cache) and the keys of its versions */
  readModel: string; keys: ReadVersionKeys;
  uncachedUrl: string; seconds: number; goal: number;
}): Promise<void> {
  const pg = await pgbench(o.dbUrl, o.sql, 50, o.seconds);
  const base = { name: 'pgbench same SQL', value: pg.tps };
  const cached = await httpLoad(o.url, 50, o.seconds);
  const live = await withCommits(o.redis, o.keys, o.readModel, 20, () => httpLoad(o.url, 50, o.seconds));
  const uncached = await httpLoad(o.uncachedUrl, 50, o.seconds);
  report({ name: `${o.name} @50 conns, read cache on, 20 commits/s`, value: live.rps, unit: 'req/s', baseline: base, goal: o.goal });
  const line = (what: string, h: HttpLoad) => `    ${what}: p50 ${h.p50} ms, p99 ${h.p99} ms, errors ${h.errors}, non-2xx ${h.non2xx}\n`;
  process.stdout.write(line('20 commits/s', live));
  report({ name: `  same, no commits (every answer from the cache)`, value: cached.rps, unit: 'req/s', baseline: base });
  process.stdout.write(line('no commits', cached));
  report({ name: `  same, READ_CACHE_TTL_MS=0 (every request queries Postgres)`, value: uncached.rps, unit: 'req/s', baseline: base });
  process.stdout.write(line('no cache', uncached));
  process.stdout.write(`    pgbench avg latency ${pg.latencyMs} ms\n`);
}

export interface PgbenchResult { tps: number; latencyMs: number }

/** pgbench running one SQL script at the given concurrency against the given database. */
export async function pgbench(dbUrl: string, sqlText: string, clients: number, seconds: number): Promise<PgbenchResult> {
  const { writeFile, mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const dir = await mkdtemp(path.join(tmpdir(), 'pgbench-'));
  const file = path.join(dir, 'q.sql');
  await writeFile(file, `${sqlText};\n`);
  return pgbenchScripts(dbUrl, ['-f', file], clients, seconds);
}

/**
 * pgbench running script arguments (`-f file[@weight]` ...) at the given concurrency, prepared statements.
 * BENCH_PGBENCH_OUT=1 prints pgbench's own report with each script's latency (`-r`).
 */
export async function pgbenchScripts(dbUrl: string, scripts: readonly string[], clients: number, seconds: number): Promise<PgbenchResult> {
  const threads = Math.min(clients, 2);
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn('pgbench', ['-n', ...(process.env['BENCH_PGBENCH_OUT'] ? ['-r'] : []), ...scripts, '-c', String(clients), '-j', String(threads), '-T', String(seconds), '-M', 'prepared', dbUrl]);
    let text = '';
    p.stdout.on('data', (d: Buffer) => { text += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { text += d.toString(); });
    p.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`pgbench failed: ${text}`))));
  });
  if (process.env['BENCH_PGBENCH_OUT']) process.stdout.write(out);
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? 0);
  const latencyMs = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1] ?? 0);
  return { tps, latencyMs };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** wrk on PATH (BENCH_WRK=0 forces autocannon): a C load generator, as light as pgbench is on the baseline's side. */
export function wrkAvailable(): boolean {
  if (process.env['BENCH_WRK'] === '0') return false;
  const dirs = (process.env['PATH'] ?? '').split(':').filter((d) => d !== '');
  return dirs.some((d) => existsSync(path.join(d, 'wrk')));
}

/**
 * wrk's script: each request the next path of a list (one per line; each thread starts at
 * its own offset), and the figures printed as one JSON line when the run ends.
 */
const WRK_SCRIPT = `
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS_LINES")) do paths[#paths + 1] = line end
local n = 0
function init(args) n = math.random(#paths) end
function request()
  n = n % #paths + 1
  return wrk.format("GET", paths[n])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"us":%d,"p50":%.3f,"p99":%.3f,"errors":%d,"non2xx":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
`;

/**
 * HTTP load over a list of request paths (a JSON array in `pathsFile`): wrk when installed
 * (2 threads), else autocannon in a worker thread (the read mix's setupRequest takes the paths).
 */
export async function pathsLoad(url: string, pathsFile: string, connections: number, seconds: number): Promise<HttpLoad & { tool: string }> {
  if (!wrkAvailable()) {
    process.env['BENCH_READS_PATHS'] = pathsFile;
    const setupRequest = path.join(path.dirname(fileURLToPath(import.meta.url)), 'reads-request.cjs');
    const r = await autocannon({ url, connections, duration: seconds, workers: 1, requests: [{ setupRequest }] });
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx, tool: 'autocannon' };
  }
  const { readFile, writeFile } = await import('node:fs/promises');
  const lines = `${pathsFile}.lines`;
  const script = `${pathsFile}.lua`;
  if (!existsSync(lines)) await writeFile(lines, `${(JSON.parse(await readFile(pathsFile, 'utf8')) as string[]).join('\n')}\n`);
  await writeFile(script, WRK_SCRIPT);
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn('wrk', ['-t', '2', '-c', String(connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', script, url], { env: { ...process.env, BENCH_PATHS_LINES: lines } });
    let text = '';
    p.stdout.on('data', (d: Buffer) => { text += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { text += d.toString(); });
    p.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk failed: ${text}`))));
  });
  const m = /^WRK (\{.*\})$/m.exec(out);
  if (!m) throw new Error(`wrk printed no figures: ${out}`);
  const w = JSON.parse(m[1]!) as { requests: number; us: number; p50: number; p99: number; errors: number; non2xx: number };
  return { rps: w.requests / (w.us / 1e6), p50: w.p50, p99: w.p99, errors: w.errors, non2xx: w.non2xx, tool: 'wrk' };
}
