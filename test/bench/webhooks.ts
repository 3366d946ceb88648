/**
 * Webhook delivery bench: 1,000 events/s for BENCH_WEBHOOK_SECONDS (10 s), each
 * concerning a gateway with 10 webhooks on 10 receivers (10,000 deliveries/s offered),
 * through the stream, the webhooks projection (in this process) and BENCH_WEBHOOK_WORKERS
 * (2) `serve --role webhooks` processes. Two comparisons, each against the same bodies
 * POSTed to the same receivers directly, by as many processes with the same HTTP client at
 * the same concurrency, with no outbox:
 *
 * - at the offered rate (the goal): the direct POSTs paced as the feed appends the
 *   events; deliveries/s (first append to last first arrival) and first-attempt p50/p99
 *   of each side;
 * - capacity: BENCH_WEBHOOK_BACKLOG_EVENTS (5,000) events appended unpaced, as fast as the
 *   stream takes them, drained by the workers, against the same POSTs unpaced.
 *
 * After the full-rate run and its direct baseline, a time profile (./latency-profile.ts):
 * p50/p99/max per 500 ms of append (or due) time, beside each process's event-loop stalls,
 * GC pauses and CPU in that half second (./loop-probe.cjs in the children), the
 * connections the receivers accepted, the ready list's length, and the workers' own
 * gauges (LOG_LEVEL debug: slots busy, deliveries in flight and waiting, pops, time
 * waiting for room / in BLMPOP / preparing, record writes). It says WHEN the slow
 * deliveries happen and which process was stalled then.
 */
import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { AddressInfo } from 'node:net';
import { Keypair } from '@solana/web3.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { ROOT, startCli, type Proc } from '../support/process.js';
import { benchEvents, dueOffsetMs, perTick, type DirectInput, type DirectResult } from './direct-post.js';
import { appendRaw } from '../../infra/redis/event-stream.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { serializeEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startProjection } from '../../projections/runner/runner.js';
import { webhooksProjection } from '../../projections/webhooks/projection.js';
import { sealSecret } from '../../infra/crypto/secret-box.js';
import { secretAad } from '../../commands/webhooks/secret-aad.js';
import { newSigningSecret } from '../../commands/webhooks/delivery/signer.js';
import { percentile, report } from './harness.js';
import { webhookReadyKey } from '../../src/kernel/names/index.js';
import { BUCKET_MS, printProfile, probeSamples, startLoopMonitor, type LoopSample, type Timed } from './latency-profile.js';

const RATE = 1000;
/** the full-rate run's events; the baseline POSTs the same ones */
const FULL_SEED = 6;
const RECEIVERS = 10;
const SECONDS = Number(process.env['BENCH_WEBHOOK_SECONDS'] ?? 10);
/**
 * Seconds of the full rate, with events of their own, before the timed run (and, in each
 * direct-POST process, before its timed POSTs): a worker in service has been delivering
 * for hours, its code compiled by V8's optimizing tiers and its pools open; one started a
 * second ago delivers at about half its later rate for its first second. 0 times the
 * cold start instead.
 */
const WARM_SECONDS = Number(process.env['BENCH_WEBHOOK_WARM_SECONDS'] ?? 3);
const WARM_SEED = 5;
const WORKERS = Number(process.env['BENCH_WEBHOOK_WORKERS'] ?? 2);
const CONCURRENCY = Number(process.env['BENCH_WEBHOOK_CONCURRENCY'] ?? 64);
/** node options of the worker processes, space-separated (e.g. `--cpu-prof --cpu-prof-dir=prof`) */
/** events of the capacity run, appended unpaced */
const BACKLOG_EVENTS = Number(process.env['BENCH_WEBHOOK_BACKLOG_EVENTS'] ?? 5000);
const BACKLOG_SEED = 9;
const NODE_ARGS = (process.env['BENCH_WEBHOOK_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
/** every child process reports its event loop's stalls (./loop-probe.cjs) for the time profiles */
const PROBE = ['--require', path.join(ROOT, 'test', 'bench', 'loop-probe.cjs')];

interface Counter { url: string; firstAt: Map<string, number>; count: number; connectedAt: number[]; close(): Promise<void> }

/** A receiver that keeps only the first arrival time of each webhook-id. */
async function counter(): Promise<Counter> {
  const firstAt = new Map<string, number>();
  const c = { firstAt, count: 0, connectedAt: [] as number[] };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      if (typeof id === 'string' && !firstAt.has(id)) firstAt.set(id, Date.now());
      c.count += 1;
      res.writeHead(200).end();
    });
  });
  server.on('connection', () => { c.connectedAt.push(Date.now()); });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return Object.assign(c, { url, async close() { server.closeAllConnections(); await new Promise<void>((r) => server.close(() => r())); } });
}

/**
 * The baseline: the run's own delivery bodies (same events, same receivers), POSTed
 * directly by as many processes as there are workers, each with the workers' HTTP client
 * at a worker's concurrency, and no outbox (./direct-post.ts), paced like the feed at
 * `rate` events/s (0: unpaced). Timed from the moment every process has its requests
 * ready. A POST that fails (a loaded machine) is counted, not fatal: the rate is of those
 * answered.
 */
async function directBaseline(receivers: readonly Counter[], gateway: string, events: number, seed: number, rate: number, tag: string, warm = 0): Promise<{ rate: number; failed: number; p50: number; p99: number; timed: Timed[]; startedAt: number; loops: Map<string, LoopSample[]> }> {
  const script = path.join(ROOT, 'test', 'bench', 'direct-post.ts');
  const children = Array.from({ length: WORKERS }, (_, i) => {
    const input: DirectInput = { urls: receivers.map((r) => r.url), gateway, seed, events, process: i, processes: WORKERS, concurrency: CONCURRENCY, rate, tag, warm };
    return spawn(process.execPath, [...PROBE, '--import', 'tsx', script], { cwd: ROOT, env: { ...process.env, BENCH_DIRECT: JSON.stringify(input) }, stdio: ['pipe', 'pipe', 'pipe'] });
  });
  // the probe's lines are kept for the profile; anything else is passed on
  const probes = children.map(() => ({ out: '' }));
  children.forEach((c, i) => createInterface({ input: c.stderr }).on('line', (l) => {
    if (l.startsWith('LOOPPROBE ')) probes[i]!.out += `${l}\n`; else process.stderr.write(`${l}\n`);
  }));
  const lines = children.map((c) => createInterface({ input: c.stdout }));
  const nextLine = (i: number) => new Promise<string>((resolve, reject) => {
    lines[i]!.once('line', resolve);
    children[i]!.once('exit', (code) => reject(new Error(`direct POST process exited (${code})`)));
  });
  await Promise.all(children.map((_, i) => nextLine(i))); // ready
  const results = children.map((_, i) => nextLine(i).then((l) => JSON.parse(l) as DirectResult));
  for (const c of children) c.stdin.write('go\n');
  const done = await Promise.all(results);
  const seconds = (Math.max(...done.map((d) => d.endedAt)) - Math.min(...done.map((d) => d.startedAt))) / 1000;
  const answered = done.reduce((n, d) => n + d.answered, 0);
  const timed = done.flatMap((d) => d.latencies.map((ms, i) => ({ at: d.dues[i]!, ms })));
  const latencies = done.flatMap((d) => d.latencies).sort((a, b) => a - b);
  const loops = new Map(probes.map((p, i) => [`direct${i + 1}`, [...probeSamples(p.out).values()].flat()]));
  return { rate: answered / seconds, failed: done.reduce((n, d) => n + d.failed, 0), p50: percentile(latencies, 50), p99: percentile(latencies, 99), timed, startedAt: Math.min(...done.map((d) => d.startedAt)), loops };
}

interface Gauges {
  t: number; busy: number; inflight: number; ahead: number;
  fastPath?: { pops: number; entries: number; roomWaitMs: number; popMs: number; prepMs: number };
  writes: { n: number; records: number; ms: number; maxMs: number };
}

/** The worker's debug-level gauges (commands/webhooks/delivery/worker.ts) from `from` to `to`, one line per period. */
function printGauges(name: string, from: number, to: number, output: string): void {
  const rows: Gauges[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes('"gauges"')) continue;
    try { rows.push((JSON.parse(line) as { gauges: Gauges }).gauges); } catch { /* a cut line */ }
  }
  const b0 = Math.floor(from / BUCKET_MS) * BUCKET_MS;
  process.stdout.write(`    ${name}: peak busy/in flight/ahead; pops, events popped, ms waiting for room, in BLMPOP, preparing; record writes, records, slowest write ms\n`);
  for (const g of rows.filter((r) => r.t >= b0 && r.t < to)) {
    const f = g.fastPath;
    process.stdout.write(`      ${String(g.t - b0).padStart(6)} ${`${g.busy}/${g.inflight}/${g.ahead}`.padStart(11)}  ${f ? `${f.pops} ${f.entries} ${f.roomWaitMs} ${f.popMs} ${f.prepMs}` : '-'}  ${g.writes.n} ${g.writes.records} ${g.writes.maxMs}\n`);
  }
}

interface RunResult {
  expected: number; delivered: number; queued: number; feedSeconds: number; rate: number; p50: number; p99: number; queuedP50: number; queuedP99: number;
  /** for the time profile: the feed's start, each first attempt and each append → queued, by append time */
  startedAt: number; timed: Timed[]; queuedTimed: Timed[];
  /** by append time: append → the first attempt's POST started (attempted_at), and that POST's own latency (latency_ms) */
  waitTimed: Timed[]; postTimed: Timed[];
}

/**
 * Feeds `total` events at `rate` events/s (0: unpaced, in appends of 500), waits for every
 * delivery (or 120 s), and measures.
 */
async function run(env: TestEnv, receivers: readonly Counter[], rate: number, events: readonly TributaryEvent[]): Promise<RunResult> {
  const total = events.length;
  const ids = new Set(events.map((e) => e.id));
  const appendedAt = new Map<string, number>();
  const step = rate > 0 ? perTick(rate) : 500;
  const started = Date.now();
  for (let i = 0; i < total; i += step) {
    const wait = started + dueOffsetMs(i, rate) - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const part = events.slice(i, i + step);
    const at = Date.now();
    await appendRaw(env.redis, env.keys, part.map(serializeEvent));
    for (const e of part) appendedAt.set(e.id, at);
  }
  const feedSeconds = (Date.now() - started) / 1000;
  const expected = total * receivers.length;
  const arrivals = () => receivers.flatMap((r) => [...r.firstAt].filter(([id]) => ids.has(id)));
  const deadline = Date.now() + 120_000;
  let got = arrivals();
  while (got.length < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    got = arrivals();
  }
  const lastAt = Math.max(...got.map(([, at]) => at));
  // rows the projection wrote: fewer than expected means it, not the workers, held delivery back
  const queuedRows = await env.db.selectFrom('webhook_deliveries').select(['event_id', 'created_at']).where('event_id', 'in', [...ids]).execute();
  const count = queuedRows.length;
  // append → the projection's commit (created_at is its transaction's start): the projection's share of the latency
  const queuedTimed = queuedRows.map((r) => ({ at: appendedAt.get(r.event_id)!, ms: r.created_at.getTime() - appendedAt.get(r.event_id)! }));
  const queuedIn = queuedTimed.map((q) => q.ms).sort((a, b) => a - b);
  const timed = got.map(([id, at]) => ({ at: appendedAt.get(id)!, ms: at - appendedAt.get(id)! }));
  // where a first attempt's time went: waiting to be sent (projection, list, pop, a free slot), then the POST
  const attempts = await env.db.selectFrom('webhook_attempts').select(['event_id', 'attempted_at', 'latency_ms'])
    .where('attempt', '=', 1).where('event_id', 'in', [...ids]).execute();
  const waitTimed = attempts.map((a) => ({ at: appendedAt.get(a.event_id)!, ms: a.attempted_at.getTime() - appendedAt.get(a.event_id)! }));
  const postTimed = attempts.map((a) => ({ at: appendedAt.get(a.event_id)!, ms: a.latency_ms ?? 0 }));
  // an event never delivered counts as delivered at the deadline: percentiles stay honest
  const latencies = [...got.map(([id, at]) => at - appendedAt.get(id)!), ...Array.from({ length: expected - got.length }, () => 120_000)].sort((a, b) => a - b);
  return { expected, delivered: got.length, queued: Number(count), feedSeconds, rate: got.length / ((lastAt - started) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), queuedP50: percentile(queuedIn, 50), queuedP99: percentile(queuedIn, 99), startedAt: started, timed, queuedTimed, waitTimed, postTimed };
}

export async function benchWebhooks(): Promise<void> {
  process.stdout.write(`webhooks: ${RATE} events/s × ${RECEIVERS} receivers for ${SECONDS} s, ${WORKERS} worker processes × ${CONCURRENCY}\n`);
  const env = await createTestEnv('bench_webhooks');
  const benchLoop = startLoopMonitor();
  const receivers = await Promise.all(Array.from({ length: RECEIVERS }, counter));
  const procs: Proc[] = [];
  const blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
  const logger = createLogger('silent', 'bench');
  const projection = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking, keys: env.keys, logger }, webhooksProjection,
    { batchSize: 500, blockMs: 20, maxAttempts: 3, claimIdleMs: 30_000 });
  try {
    const authority = Keypair.generate().publicKey.toBase58();
    const gateway = createPdaDeriver(PROGRAM_ID).gateway(authority);
    for (const r of receivers) {
      const now = new Date();
      const row = await env.db.insertInto('webhooks').values({ gateway_pubkey: authority, gateway_account: gateway, endpoint_url: r.url, secret: '', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
      await env.db.updateTable('webhooks').set({ secret: sealSecret(newSigningSecret(), secretAad(row.id), undefined) }).where('id', '=', row.id).execute();
    }
    const workerEnv = { ...env.env, LOG_LEVEL: 'debug', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_CONCURRENCY: String(CONCURRENCY), DATABASE_POOL_MAX: '8' };
    for (let i = 0; i < WORKERS; i += 1) procs.push(startCli(['serve', '--role', 'webhooks'], workerEnv, [...NODE_ARGS, ...PROBE]));
    // Built before anything is timed: 10,000 synthetic events take this process about a
    // second of CPU, and the garbage collections that followed stalled the receivers and
    // the projection sharing it for 400-800 ms at the start of the full-rate run.
    const fullEvents = benchEvents(RATE * SECONDS, FULL_SEED, gateway);
    const backlogEvents = benchEvents(BACKLOG_EVENTS, BACKLOG_SEED, gateway);
    const warmEvents = benchEvents(RATE * WARM_SECONDS, WARM_SEED, gateway);
    await run(env, receivers, 1, benchEvents(1, 8, gateway)); // one event through: the worker processes are up

    // A light load first: latency when nothing is queued (the NOTIFY path), then the full rate.
    const light = await run(env, receivers, 20, benchEvents(40, 7, gateway));
    report({ name: `append → first attempt p50 at 20 events/s (${light.delivered} deliveries)`, value: light.p50, unit: 'ms' });
    report({ name: 'append → first attempt p99 at 20 events/s', value: light.p99, unit: 'ms' });
    // the ready list's length (events pushed, not yet popped), the most seen in each bucket
    const listMax = new Map<number, number>();
    const readyKey = webhookReadyKey(env.prefix);
    const sampler = setInterval(() => {
      void env.redis.llen(readyKey).then((n) => { const b = Math.floor(Date.now() / BUCKET_MS) * BUCKET_MS; listMax.set(b, Math.max(listMax.get(b) ?? 0, n)); });
    }, 20);
    if (warmEvents.length > 0) {
      const warm = await run(env, receivers, RATE, warmEvents);
      process.stdout.write(`  warm-up, not counted: ${WARM_SECONDS} s at ${RATE} events/s from the workers' start, first attempt p50 ${warm.p50} ms, p99 ${warm.p99} ms\n`);
    }
    const full = await run(env, receivers, RATE, fullEvents);
    clearInterval(sampler);
    // the goals at the full offered rate: p99 under 250 ms, throughput ≥ 0.8 of direct POSTs paced alike
    report({ name: `append → first attempt p50 at ${RATE} events/s`, value: full.p50, unit: 'ms' });
    report({ name: `append → first attempt p99 at ${RATE} events/s (goal < 250 ms: ${full.p99 < 250 ? 'met' : 'NOT met'})`, value: full.p99, unit: 'ms' });
    process.stdout.write(`    of which append → queued by the projection: p50 ${full.queuedP50} ms, p99 ${full.queuedP99} ms\n`);
    const loopsOf = (extra: Map<string, LoopSample[]>) => new Map<string, LoopSample[]>([['bench', benchLoop.samples()], ...extra]);
    const workerLoops = new Map(procs.map((p, i) => [`worker${i + 1}`, [...probeSamples(p.output()).values()].flat()]));
    const byBucket = (items: readonly Timed[]) => {
      const m = new Map<number, number[]>();
      for (const q of items) { const b = Math.floor(q.at / BUCKET_MS) * BUCKET_MS; const l = m.get(b); if (l) l.push(q.ms); else m.set(b, [q.ms]); }
      for (const l of m.values()) l.sort((x, y) => x - y);
      return (b: number) => String(percentile(m.get(b) ?? [], 99)).padStart(5);
    };
    const queuedP99 = byBucket(full.queuedTimed);
    const waitP99 = byBucket(full.waitTimed);
    const postP99 = byBucket(full.postTimed);
    // connections the receivers accepted in a bucket (a sender's pool opening up)
    const conns = (b: number) => receivers.reduce((n, r) => n + r.connectedAt.filter((t) => t >= b && t < b + BUCKET_MS).length, 0);
    printProfile('first attempts at the full rate, append → first arrival; extra: p99 of append → queued, → POST started, of the POST; connections accepted, ready list max', full.startedAt, full.timed, loopsOf(workerLoops),
      (b) => `${queuedP99(b)} ${waitP99(b)} ${postP99(b)} ${String(conns(b)).padStart(5)} ${String(listMax.get(b) ?? '-').padStart(5)}`);
    for (const [i, p] of procs.entries()) printGauges(`worker${i + 1}`, full.startedAt, full.startedAt + SECONDS * 1000 + 2000, p.output());
    const paced = await directBaseline(receivers, gateway, RATE * SECONDS, FULL_SEED, RATE, 'paced', RATE * WARM_SECONDS);
    printProfile('direct POSTs paced alike, due → answer; extra: connections accepted', paced.startedAt, paced.timed, loopsOf(paced.loops), (b) => String(conns(b)).padStart(5));
    report({ name: 'direct POSTs paced alike, due → answer p50', value: paced.p50, unit: 'ms' });
    report({ name: 'direct POSTs paced alike, due → answer p99', value: paced.p99, unit: 'ms' });
    report({
      name: `deliveries/s at the offered rate, ${RATE} events/s (${full.delivered} of ${full.expected} delivered, ${full.queued} queued by the projection; fed in ${full.feedSeconds.toFixed(1)} s)`,
      value: full.rate, unit: 'deliveries/s', goal: 0.8,
      baseline: { name: `direct POSTs of the same bodies paced alike, no outbox${paced.failed > 0 ? ` (${paced.failed} failed)` : ''}`, value: paced.rate },
    });
    // capacity: a backlog appended as fast as the stream takes it, against unpaced direct POSTs
    const backlog = await run(env, receivers, 0, backlogEvents);
    const unpaced = await directBaseline(receivers, gateway, BACKLOG_EVENTS, BACKLOG_SEED, 0, 'unpaced');
    report({
      name: `capacity: deliveries/s draining ${backlog.expected} deliveries appended unpaced (${backlog.delivered} delivered; fed in ${backlog.feedSeconds.toFixed(1)} s)`,
      value: backlog.rate, unit: 'deliveries/s',
      baseline: { name: `direct POSTs of the same bodies, unpaced${unpaced.failed > 0 ? ` (${unpaced.failed} failed)` : ''}`, value: unpaced.rate },
    });
    const dup = receivers.reduce((n, r) => n + r.count - r.firstAt.size, 0);
    process.stdout.write(`    repeated requests (same webhook-id): ${dup}\n`);
  } finally {
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    await projection.stop();
    benchLoop.stop();
    blocking.disconnect();
    for (const r of receivers) await r.close();
    await env.close();
  }
}
