/**
 * The read mix: 50 connections over the list routes users call (reads-mix.ts),
 * keys drawn from a Zipf distribution over 10,000 gateways, 100,000 policies and 1,000,000
 * payments, while a localnet commits 200 events/s through the real indexer and projector
 * (their commits bump the read models' versions and so expire cached answers, as in
 * production). Baseline, same run, same concurrency: pgbench running the same SQL with
 * the same weights and key distribution. The API nodes are `tributary serve --role api`
 * processes, as an operator runs them: one with the read cache, one with READ_CACHE_TTL_MS=0.
 * The load comes from wrk when it is installed (a C client, as pgbench is), else autocannon.
 *
 * `reads-cpu` (benchReadsCpu): the same mix with no chain, indexer or projector, so the API
 * node and Postgres have the two cores to themselves: what the code costs, not what its
 * neighbours do.
 *
 * BENCH_READS_PROFILE=<dir>: the API processes write V8 CPU profiles there (--cpu-prof).
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startLocalnetProcess } from '../support/localnet-process.js';
import { startCli, terminate, waitFor, type Proc } from '../support/process.js';
import { freePort } from '../support/ports.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { mixRoutes, samplePaths, spaceSizes, writeScripts, SIZE, SECONDS, RATE, MODELS, cacheOutcomes } from './reads-mix.js';
import { seedReads } from './reads-seed.js';
import { pathsLoad, pgbenchScripts, timed, type HttpLoad } from './harness.js';
import { raiseChain } from './chain-priority.js';

const CONNECTIONS = 50;
/**
 * API processes per node (API_PROCESSES): one unless set. Postgres needs a core of the two
 * as much as the API does; a second API process only takes turns with it.
 */
const PROCESSES = Number(process.env['BENCH_API_PROCESSES'] ?? 1);

interface ApiProc { url: string; proc: Proc }

/** seconds of the mix each API process serves before the timed phases (0: they start cold, as the bench did before) */
const WARM_SECONDS = Number(process.env['BENCH_READS_WARM_SECONDS'] ?? 5);

async function startApi(env: TestEnv, extra: Record<string, string>): Promise<ApiProc> {
  const port = await freePort();
  const prof = process.env['BENCH_READS_PROFILE'];
  const proc = startCli(['serve', '--role', 'api'], {
    ...env.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000', API_PROCESSES: String(PROCESSES), ...extra,
  }, prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/v1/health`).catch(() => undefined))?.ok, 90_000, `the API on ${port}\n${proc.output()}`);
  return { url, proc };
}

/** CPU seconds (user + system) the process has used so far, from /proc (0 where there is none). */
async function cpuSeconds(pid: number | undefined): Promise<number> {
  const stat = pid === undefined ? undefined : await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

type MixLoad = HttpLoad & { hitRate: number; tool: string; cpuPerRequestUs: number };

async function mixLoad(api: ApiProc, pathsFile: string): Promise<MixLoad> {
  const { url } = api;
  const before = await cacheOutcomes(url, PROCESSES);
  const cpu0 = await cpuSeconds(api.proc.child.pid);
  const r = await pathsLoad(url, pathsFile, CONNECTIONS, SECONDS);
  const cpu = (await cpuSeconds(api.proc.child.pid)) - cpu0;
  const after = await cacheOutcomes(url, PROCESSES);
  const d = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
  const all = d('hit') + d('miss') + d('shared') + d('bypass');
  // the API process's CPU per request of the phase (one API process: with more, the parent's only)
  return { ...r, hitRate: all === 0 ? 0 : d('hit') / all, cpuPerRequestUs: (cpu * 1e6) / Math.max(1, r.rps * SECONDS) };
}

/** Commits of the read models a phase saw: version bumps per second, summed over the mix's models. */
async function versions(env: TestEnv): Promise<number> {
  const vs = await env.redis.mget(MODELS.map((m) => env.keys.readVersion(m)));
  return vs.reduce((n, v) => n + Number(v ?? 0), 0);
}

/**
 * Entries ever added to the stream (XINFO STREAM's entries-added): its length would not
 * do, as the projector trims what every group has acknowledged, and a phase that trims
 * more than it appends printed a negative rate.
 */
async function entriesAdded(env: TestEnv): Promise<number> {
  const info = (await env.redis.xinfo('STREAM', env.keys.events).catch(() => [])) as unknown[];
  const i = info.indexOf('entries-added');
  return i >= 0 ? Number(info[i + 1]) : 0;
}

async function phase<T>(env: TestEnv, what: string, fn: () => Promise<T>): Promise<T> {
  const v0 = await versions(env);
  const e0 = await entriesAdded(env);
  const { ms, result } = await timed(fn);
  const bumps = (await versions(env)) - v0;
  const events = (await entriesAdded(env)) - e0;
  process.stdout.write(`    (${what}: ${(events / (ms / 1000)).toFixed(0)} events/s into the stream, ${(bumps / (ms / 1000)).toFixed(1)} read-model commits/s)\n`);
  return result;
}

/**
 * Waits (up to 60 s) until the pipeline has caught up with the chain: a phase that starves
 * it (pgbench's 50 backends do: 5-50 events/s reach the stream during it) leaves a backlog,
 * and the phase after would otherwise carry that catch-up (about 370 events/s instead of
 * 200) besides its own load. Caught up: the stream is within half a second of the
 * localnet's events, and the localnet itself commits at its own rate again (no burst of
 * its own catch-up), for two checks in a row a second apart.
 */
async function settle(env: TestEnv, ln: Awaited<ReturnType<typeof startLocalnetProcess>>): Promise<void> {
  const deadline = Date.now() + 60_000;
  let committed = (await ln.state()).events;
  let calm = 0;
  while (Date.now() < deadline && calm < 2) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = (await ln.state()).events;
    const behind = now - (await entriesAdded(env));
    calm = behind <= RATE / 2 && now - committed <= RATE * 1.25 ? calm + 1 : 0;
    committed = now;
  }
}

export const benchReads = (): Promise<void> => readMix(true);
export const benchReadsCpu = (): Promise<void> => readMix(false);

/** `chain`: a localnet commits RATE events/s through the indexer and projector during the phases. */
async function readMix(chain: boolean): Promise<void> {
  const label = chain ? 'read mix' : 'read mix without commits';
  process.stdout.write(`${chain ? 'reads' : 'reads-cpu'}: ${SIZE.gateways} gateways, ${SIZE.policies} policies, ${SIZE.payments} payments; ${CONNECTIONS} conns, `
    + `${chain ? `${RATE} events/s committed` : 'no commits'}; ${PROCESSES} API process(es) per node; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the start\n`);
  const env = await createTestEnv('bench_reads');
  const procs: Proc[] = [];
  let ln: Awaited<ReturnType<typeof startLocalnetProcess>> | undefined;
  try {
    const defaultMint = loadConfig({ ...env.env, LOG_LEVEL: 'silent' }).solana.defaultStablecoin;
    const seeded = await timed(() => seedReads(env.db, SIZE, defaultMint));
    process.stdout.write(`  seeded in ${(seeded.ms / 1000).toFixed(1)} s\n`);
    const routes = mixRoutes(env.db, seeded.result, defaultMint);
    const sizes = spaceSizes(seeded.result);
    const dir = await mkdtemp(path.join(tmpdir(), 'bench-reads-'));
    const pathsFile = path.join(dir, 'paths.json');
    await writeFile(pathsFile, JSON.stringify(samplePaths(routes, sizes, 200_000)));
    const scripts = await writeScripts(dir, routes, sizes);

    let chainEnv: Record<string, string> = {};
    // before each phase: the chain above the load, so it commits its rate in every phase (chain-priority.ts)
    let raise = async (): Promise<void> => undefined;
    if (chain) {
      // the chain starts once the data is in: the indexer follows it live, not through a backlog
      ln = await startLocalnetProcess({ seed: 'bench-reads', rate: RATE, maxEvents: 100_000_000 });
      chainEnv = { SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet' };
      const pipeline = startCli(['serve', '--role', 'projector,indexer'], { ...env.env, ...chainEnv, LOG_LEVEL: 'warn' });
      procs.push(pipeline);
      const pids = [ln.proc.child.pid, pipeline.child.pid].filter((p): p is number => p !== undefined);
      raise = async () => { process.stdout.write(`    (${await raiseChain(env.db, pids, [pipeline.child.pid ?? -1])})\n`); };
      await waitFor(async () => (await versions(env)) > 0, 300_000, 'the projector\'s first commit').catch((err: Error) => {
        throw new Error(`${err.message}\n${pipeline.output().slice(-2000)}`);
      });
    }
    const cached = await startApi(env, chainEnv);
    const uncached = await startApi(env, { ...chainEnv, READ_CACHE_TTL_MS: '0' });
    procs.push(cached.proc, uncached.proc);
    await checkRoutes(cached.url, routes.map((r) => r.path(1)));

    await raise();
    const pg = await phase(env, 'pgbench', () => pgbenchScripts(env.dbUrl, scripts, CONNECTIONS, SECONDS));
    // after pgbench: the API pools a warm-up fills and pgbench's 50 backends together would pass max_connections
    await warmUp(env, [['cache on', cached], ['cache off', uncached]], pathsFile);
    if (ln) await settle(env, ln);
    await raise();
    const on = await phase(env, 'cache on', () => mixLoad(cached, pathsFile));
    if (ln) await settle(env, ln);
    await raise();
    const off = await phase(env, 'cache off', () => mixLoad(uncached, pathsFile));
    const line = (what: string, h: MixLoad) =>
      `${what} ${h.rps.toFixed(0)} req/s (${h.tool}), p50 ${h.p50} ms, p99 ${h.p99} ms, cache hit rate ${(h.hitRate * 100).toFixed(0)}%, errors ${h.errors + h.non2xx}, API CPU ${h.cpuPerRequestUs.toFixed(0)} us/request; `
      + `pgbench same mix ${pg.tps.toFixed(0)} tps (avg ${pg.latencyMs} ms) → ratio ${(h.rps / pg.tps).toFixed(2)}\n`;
    process.stdout.write(line(`${label}, cache on:`, on));
    process.stdout.write(line(`${label}, cache off:`, off));
    const [{ n }] = (await sql<{ n: string }>`SELECT count(*)::text AS n FROM events`.execute(env.db)).rows as [{ n: string }];
    process.stdout.write(`  (goals: ≥ 0.5 cache on, ≥ 0.3 cache off; archive now ${n} events)\n`);
  } finally {
    for (const p of procs) await terminate(p, 30_000).catch(() => undefined);
    await ln?.stop();
    await env.close();
  }
}

/**
 * Each API process serves WARM_SECONDS of the mix before anything is timed, so that the
 * phases measure processes in service, whose hot paths V8 has compiled with its optimizing
 * tiers, not their first seconds (a cold process spends a large share of them compiling
 * and collecting). The warm-up's own figures are printed, so the cold start stays visible.
 * Then the cache is emptied, as far as the phases can tell: a new cache generation makes
 * every answer cached so far stale, so the cache-on phase starts from no hits, as before.
 */
async function warmUp(env: TestEnv, apis: readonly [string, ApiProc][], pathsFile: string): Promise<void> {
  if (WARM_SECONDS <= 0) return;
  for (const [what, api] of apis) {
    const w = await pathsLoad(api.url, pathsFile, CONNECTIONS, WARM_SECONDS);
    process.stdout.write(`  warm-up, ${what}: ${WARM_SECONDS} s, ${w.rps.toFixed(0)} req/s, p50 ${w.p50} ms, p99 ${w.p99} ms, errors ${w.errors + w.non2xx} (not counted)\n`);
  }
  await env.redis.set(env.keys.readGeneration, `bench-warm-${Date.now()}`);
}

/** Every route of the mix answers 200 before the load starts (a 4xx would measure nothing). */
async function checkRoutes(url: string, paths: readonly string[]): Promise<void> {
  for (const p of paths) {
    const res = await fetch(`${url}${p}`);
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
  }
}
