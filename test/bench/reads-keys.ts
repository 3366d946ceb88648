/**
 * The read cache's hit rate on the read mix (reads-mix.ts) while the read models commit,
 * against the same with no commits, in one run: what commits cost the cache. PaymentRecords
 * on keys the mix does not read (as the localnet's in `run.ts reads`) are appended to the
 * stream at BENCH_COMMIT_RATE a second and committed by a real projector
 * (archive, payment-policies, payments, payment-stats); one API node with the cache as
 * configured (READ_CACHE_TTL_MS, 1 s unless set) serves 50 connections. Without versions
 * per key every commit expired every answer of its model; with them a commit expires the
 * answers of the keys it touched (here the events-by-name list of PaymentRecord), so the
 * ratio is near 1 and the hit rate is bounded by the TTL on the Zipf tail.
 *
 * Counted figures (hit rates, commits), not wall clock: they hold on a loaded machine too,
 * as long as the projector keeps up (the commit rate is printed).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startCli, terminate, waitFor, type Proc } from '../support/process.js';
import { freePort } from '../support/ports.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { mixRoutes, samplePaths, spaceSizes, SIZE, SECONDS, RATE, MODELS, SETUP_REQUEST, cacheOutcomes } from './reads-mix.js';
import { seedReads } from './reads-seed.js';
import { report, timed } from './harness.js';

const PROCESSES = 2;
/** the API node's READ_CACHE_TTL_MS when set here, its default otherwise */
const TTL_MS = process.env['READ_CACHE_TTL_MS'];

interface Phase { rps: number; hitRate: number; commitsPerSecond: number; eventsPerSecond: number }

async function versions(env: TestEnv): Promise<number> {
  return (await env.redis.mget(MODELS.map((m) => env.keys.readVersion(m)))).reduce((n, v) => n + Number(v ?? 0), 0);
}

/** PaymentRecords of fresh policies and gateways, RATE a second in tenths of a second, until stopped. */
function startCommits(env: TestEnv): { stop: () => Promise<void>; appended: () => number } {
  let stopping = false;
  let n = 0;
  let slot = 50_000_000;
  const running = (async () => {
    while (!stopping) {
      const started = Date.now();
      const batch = Array.from({ length: Math.max(1, Math.round(RATE / 10)) }, () => {
        slot += 1;
        n += 1;
        return makeEvent('PaymentRecord', { memo: `live-${n}`, record_id: n }, { seed: `reads-keys:${slot}`, slot, blockTime: 1_700_000_000 + slot, ixPath: '0', index: 0 });
      });
      await appendTestEvents(env, batch);
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - started))));
    }
  })();
  return { stop: async () => { stopping = true; await running; }, appended: () => n };
}

async function phase(env: TestEnv, url: string, appended: () => number): Promise<Phase> {
  const o0 = await cacheOutcomes(url, PROCESSES);
  const v0 = await versions(env);
  const n0 = appended();
  const { ms, result } = await timed(() => autocannon({ url, connections: 50, duration: SECONDS, workers: 1, requests: [{ setupRequest: SETUP_REQUEST }] }));
  const o1 = await cacheOutcomes(url, PROCESSES);
  const d = (k: string) => (o1[k] ?? 0) - (o0[k] ?? 0);
  const all = d('hit') + d('miss') + d('shared') + d('bypass');
  return {
    rps: result.requests.average,
    hitRate: all === 0 ? 0 : d('hit') / all,
    commitsPerSecond: ((await versions(env)) - v0) / (ms / 1000),
    eventsPerSecond: (appended() - n0) / (ms / 1000),
  };
}

export async function benchReadKeys(): Promise<void> {
  process.stdout.write(`reads-keys: ${SIZE.gateways} gateways, ${SIZE.policies} policies, ${SIZE.payments} payments; 50 conns; ${RATE} events/s committed on keys the mix does not read\n`);
  const env = await createTestEnv('bench_read_keys');
  const procs: Proc[] = [];
  try {
    const defaultMint = loadConfig({ ...env.env, LOG_LEVEL: 'silent' }).solana.defaultStablecoin;
    const seeded = await seedReads(env.db, SIZE, defaultMint);
    const routes = mixRoutes(env.db, seeded, defaultMint);
    const pathsFile = path.join(await mkdtemp(path.join(tmpdir(), 'bench-read-keys-')), 'paths.json');
    await writeFile(pathsFile, JSON.stringify(samplePaths(routes, spaceSizes(seeded), 200_000)));
    process.env['BENCH_READS_PATHS'] = pathsFile;

    procs.push(startCli(['serve', '--role', 'projector'], { ...env.env, LOG_LEVEL: 'warn', PROJECTIONS: MODELS.join(',') }));
    const port = await freePort();
    const api = startCli(['serve', '--role', 'api'], {
      ...env.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000', API_PROCESSES: String(PROCESSES),
      ...(TTL_MS !== undefined ? { READ_CACHE_TTL_MS: TTL_MS } : {}),
    });
    procs.push(api);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${url}/v1/health`).catch(() => undefined))?.ok, 90_000, `the API\n${api.output()}`);

    // warm (the JIT, the pools) before either phase counts
    await autocannon({ url, connections: 50, duration: 3, workers: 1, requests: [{ setupRequest: SETUP_REQUEST }] });
    const quiet = await phase(env, url, () => 0);
    const commits = startCommits(env);
    let live: Phase;
    try {
      await waitFor(async () => (await versions(env)) > 0, 60_000, 'the projector\'s first commit');
      live = await phase(env, url, commits.appended);
    } finally {
      await commits.stop();
    }
    const line = (what: string, p: Phase) => `    ${what}: ${p.rps.toFixed(0)} req/s, cache hit rate ${(p.hitRate * 100).toFixed(1)}%, `
      + `${p.eventsPerSecond.toFixed(0)} events/s appended, ${p.commitsPerSecond.toFixed(1)} read-model commits/s\n`;
    report({ name: 'read mix, cache hit rate while the read models commit', value: live.hitRate * 100, unit: '%', baseline: { name: 'the same with no commits', value: quiet.hitRate * 100 } });
    process.stdout.write(line('commits', live));
    process.stdout.write(line('no commits', quiet));
  } finally {
    for (const p of procs) await terminate(p, 30_000).catch(() => undefined);
    await env.close();
  }
}
