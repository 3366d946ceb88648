/**
 * `make soak`: the cluster of `make cluster` on private PostgreSQL and Redis servers,
 * loopback only, under mixed reads at a high rate, the localnet's workload, Socket.IO
 * clients and webhook receivers, short-period subscriptions and metered pay-as-you-go
 * calls paid through the 402 flow (executed and charged by the scheduler role), while
 * every role is killed with SIGKILL in turn and Redis and PostgreSQL are restarted. Then
 * it checks the archive against the chain's ledger, every read model against a clean
 * replay, the outbox against the receivers, the clients against the payments of their
 * trackingIds, every due payment executed once and every metered chunk charged once;
 * prints the figures and the error rate during each fault; exits 1 when a check fails.
 * Settings: infra/README.md.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startCluster, type Cluster } from '../../infra/cluster/cluster.js';
import { cliCommand, repoRoot } from '../../infra/cluster/main.js';
import { deriveActors } from '../../infra/localnet/genesis.js';
import { createDb } from '../../infra/postgres/database.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { listenPorts } from './ports.js';
import { rpcCall } from '../support/localnet-process.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { startPrivateServices, type PrivateServices } from './services.js';
import { readRequests, startReadLoad } from './load.js';
import { connectClients, followedIds, type SoakClients } from './sockets.js';
import { registerWebhook, startLedgerReceiver, type LedgerReceiver } from './webhooks.js';
import { faultPlan, runFaults } from './faults.js';
import { archiveCheck, paymentKinds, paymentsByTrackingId, readModelChecks, socketCheck, socketMissing, webhookCheck, type Check } from './checks.js';
import { printReport } from './report.js';
import { SOAK_PREFIX, soakPrefix, soakRedis } from './redis-cluster.js';
import { startSettlementLoad, type SettlementLoad } from './settlement-load.js';
import { paygCheck, scheduleCheck, dueLeft, inDoubtLeft, unsettledLeft } from './settlement-checks.js';
import { readPolicies, recordsByPolicy, servedPolicies } from './settlement-chain.js';
import { addressReuseCheck, describeInjected, faultCounts, reconciliationCheck, startCpuHog, type FaultCounts } from './hostile.js';

const env = process.env;
const int = (name: string, dflt: number): number => {
  const n = Number(env[name] ?? dflt);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
};
const S = {
  seconds: int('SOAK_SECONDS', 60), rate: int('SOAK_RATE', 500), clients: int('SOAK_CLIENTS', 500), perClient: int('SOAK_TRACKING_PER_CLIENT', 4),
  readConnections: int('SOAK_READ_CONNECTIONS', 16), readRate: int('SOAK_READ_RATE', 250), maxSeconds: int('SOAK_MAX_SECONDS', 900),
  stallSeconds: int('SOAK_STALL_SECONDS', 90), seed: env['SOAK_SEED'] ?? 'soak', keepData: env['SOAK_KEEP_DATA'] === '1',
  subPeriod: int('SOAK_SUB_PERIOD', 30), subscriptions: int('SOAK_SUBSCRIPTIONS', 4), paygPolicies: int('SOAK_PAYG_POLICIES', 2),
  paygRate: int('SOAK_PAYG_RATE', 10), paygPeriod: int('SOAK_PAYG_PERIOD', 60), settleSeconds: int('SOAK_SETTLE_SECONDS', 60),
  faults: env['SOAK_LOCALNET_FAULTS'] ?? 'all', cpuHog: env['SOAK_CPU_HOG'] === '1', redisCluster: env['SOAK_REDIS_CLUSTER'] === '1',
};
const PAYG_PRICE = 10_000n;
const SCHEDULER_LEASE_MS = 5_000;
const ADMIN = 'soak-admin-key';
const t0 = Date.now();
const log = (s: string) => process.stdout.write(`[soak +${((Date.now() - t0) / 1000).toFixed(0)}s] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(probe: () => Promise<boolean>, seconds: number, what: string): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return true;
    await sleep(1000);
  }
  log(`gave up waiting for ${what} after ${seconds} s`);
  return false;
}

/** Warnings the roles logged that explain a missed notification, counted over the run's logs. */
function logWarnings(logs: string): Record<string, number> {
  const patterns: Record<string, RegExp> = {
    'notifier: execution not notified': /not notified/g,
    'api: catch-up read model behind': /read model behind the notifier/g,
    'projector: entries dead-lettered': /dead[- ]letter/gi,
    'uncaught errors': /Unhandled 'error' event|uncaughtException/g,
  };
  const out: Record<string, number> = {};
  for (const f of readdirSync(logs)) {
    if (!f.endsWith('.log')) continue;
    const text = readFileSync(path.join(logs, f), 'utf8');
    for (const [k, re] of Object.entries(patterns)) {
      const n = text.match(re)?.length ?? 0;
      if (n > 0) out[`${k} (${f})`] = (out[`${k} (${f})`] ?? 0) + n;
    }
  }
  return out;
}

/** A localnet call retried a few times: a loaded machine's localnet may drop a kept-alive connection. */
async function rpcRetry<T>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await rpcCall<T>(rpcUrl, method, params);
    } catch (err) {
      if (attempt >= 5) throw err;
      await sleep(1000);
    }
  }
}

async function ledgerOf(rpcUrl: string): Promise<TributaryEvent[]> {
  const out: TributaryEvent[] = [];
  for (;;) {
    const page = await rpcRetry<{ total: number; events: TributaryEvent[] }>(rpcUrl, 'tributary_getLedger', [{ offset: out.length, limit: 10_000 }]);
    out.push(...page.events);
    if (page.events.length === 0 || out.length >= page.total) return out;
  }
}

async function main(): Promise<number> {
  const root = repoRoot();
  const runDir = path.resolve(root, env['SOAK_RUN_DIR'] ?? 'tmp/soak');
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const maxEvents = S.rate * S.seconds;
  const deadline = t0 + S.maxSeconds * 1000;
  log(`plan: ${maxEvents} events at ${S.rate}/s (~${S.seconds} s), ${S.clients} Socket.IO clients x ${S.perClient} trackingIds, reads on ${S.readConnections} connections${S.readRate ? ` at ${S.readRate}/s` : ' unthrottled'}; run dir ${runDir}`);

  let services: PrivateServices | undefined;
  let cluster: Cluster | undefined;
  let clients: SoakClients | undefined;
  let settlement: SettlementLoad | undefined;
  const receivers: LedgerReceiver[] = [];
  const hog = S.cpuHog ? startCpuHog() : undefined;
  if (hog) log(`CPU hog: ${hog.what}`);
  const cleanup = async () => {
    hog?.stop();
    clients?.close();
    await settlement?.stop().catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    await services?.stop().catch(() => undefined);
    for (const r of receivers) await r.close();
    if (!S.keepData) for (const d of ['pg-primary', 'replica', 'redis', 'redis-cluster']) rmSync(path.join(runDir, d), { recursive: true, force: true });
  };
  process.once('SIGINT', () => { log('SIGINT: stopping'); void cleanup().then(() => process.exit(130)); });

  try {
    services = await startPrivateServices(runDir, await listenPorts(), await listenPorts());
    log(`private PostgreSQL ${services.databaseUrl}, Redis ${services.redisUrl}`);
    const lnPort = await listenPorts(2);
    const port = await listenPorts();
    const apiBasePort = await listenPorts(2);
    const roleEnv: Record<string, string> = {
      PATH: env['PATH'] ?? '/usr/bin:/bin', HOME: env['HOME'] ?? '/root',
      DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl, REDIS_PREFIX: SOAK_PREFIX, ADMIN_API_KEY: ADMIN,
      LOG_LEVEL: 'warn', TRIBUTARY_DEV_MODE: 'true', SOLANA_CLUSTER: 'localnet', LOCALNET_PORT: String(lnPort), LOCALNET_SEED: S.seed,
      LOCALNET_FIXTURES: path.join(runDir, 'fixtures.json'), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_DELAYS_MS: '500,1000,2000', WEBHOOK_SLOW_SCHEDULE_MS: '3000,5000,10000,20000,30000,60000',
      // one client address generates all the read load: the per-IP limit is not what is measured
      RATE_LIMIT_PER_MINUTE: '100000000', WS_MAX_CONNECTIONS_PER_IP_PER_TRACKING_ID: '1000', WS_MAX_CATCH_UPS_PER_MINUTE: '100000',
      WS_MAX_MESSAGES_PER_MINUTE: '100000', POOL_SYNC_INTERVAL_MS: '0', WS_LEASE_SECONDS: '10', PROJECTOR_CLAIM_IDLE_MS: '10000',
      INDEXER_BACKFILL_INTERVAL_MS: '5000',
      // the hostile chain (read by the localnet only): seeded by LOCALNET_SEED
      LOCALNET_FAULTS: S.faults,
      // settlement: the demo resource (the first fixture gateway, served by the scheduler) sells
      // Custom:N subscriptions and metered calls; a killed scheduler's claims are free after the lease
      X402_DEMO_FREQUENCY: `Custom:${S.subPeriod}`, X402_DEMO_PAYG_PRICE: String(PAYG_PRICE), X402_DEMO_PAYG_MAX_CHUNK: String(PAYG_PRICE * 20n),
      X402_DEMO_PAYG_MAX_PER_PERIOD: String(PAYG_PRICE * 100_000n), X402_DEMO_PAYG_PERIOD_SECONDS: String(S.paygPeriod),
      SCHEDULER_POLL_MS: '500', SCHEDULER_LEASE_MS: String(SCHEDULER_LEASE_MS),
      PAYG_SETTLE_INTERVAL_MS: '2000', PAYG_SETTLE_THRESHOLD: String(PAYG_PRICE * 40n), PAYG_ROLLOVER_MARGIN_SECONDS: '10',
      // a deleted policy's usage made unbillable within the drain: the soak's chain answers every read from its head
      PAYG_ABSENCE_CONFIRM_MS: '3000',
    };
    cluster = await startCluster({
      root, runDir, host: '127.0.0.1', port, apiBasePort, cli: cliCommand(root, env['SOAK_CLI']), env: roleEnv, log,
      counts: { indexer: 0, scheduler: 0 }, replicaPort: await listenPorts(), accessLog: false, ...(S.redisCluster ? { redisCluster: {} } : {}),
    });
    log(`cluster up: ${cluster.url} -> ${cluster.apiUrls.join(', ')}${cluster.redisCluster ? `; Redis Cluster ${cluster.redisCluster.nodes.join(',')}` : ''}`);

    const gateways = deriveActors(S.seed).gateways;
    for (const g of gateways) {
      const r = await startLedgerReceiver(g.authority.publicKey.toBase58());
      await registerWebhook(cluster.url, ADMIN, r);
      receivers.push(r);
    }
    log(`${receivers.length} webhooks registered (one per fixture gateway)`);
    // trackingIds trk-<n>: n is the workload's counter, ~0.1 per event
    const ids = followedIds(Math.max(1, Math.ceil((S.clients * S.perClient) / 2)), Math.max(10, Math.floor(maxEvents * 0.1)));
    clients = await connectClients(cluster.url, ids, S.clients, S.perClient);
    await until(async () => clients!.connected() === S.clients, 120, 'every client connected');
    log(`${clients.connected()} clients connected, following ${new Set(ids).size} trackingIds`);

    const db = createDb(services.databaseUrl, 4, 'soak-check');
    const redis = soakRedis(cluster, services.redisUrl);
    const stream = `${soakPrefix(cluster)}events`;
    const archived = async () => Number((await db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
    const load = startReadLoad(cluster.url, readRequests(ids, gateways.map((g) => g.address.toBase58())), { connections: S.readConnections, rate: S.readRate });
    // the workload starts once the settlement traffic is paid for: under the workload a loaded
    // machine's localnet can leave a Payment's reads unanswered for longer than a client waits
    await cluster.startLocalnet({ port: lnPort, seed: S.seed, rate: 0, maxEvents });
    const rpcUrl = `http://127.0.0.1:${lnPort}`;
    cluster.addRole('indexer');
    // the scheduler after the localnet: it serves the fixture gateways from the fixtures file the localnet writes
    cluster.addRole('scheduler');
    const load402 = await startSettlementLoad(cluster.url, rpcUrl, [...deriveActors(S.seed).spare, ...deriveActors(S.seed).merchants], S, log);
    settlement = load402;
    const settledAt = Date.now();
    await rpcRetry(rpcUrl, 'tributary_setWorkloadRate', [S.rate]);
    log(`workload started at ${S.rate} events/s`);
    const samples: { t: number; events: number }[] = [];
    // how far the standby behind the API nodes' reads trails the primary, in bytes of WAL
    const replicaLags: number[] = [];
    // the workload's own events (the ledger also holds the soak's payments and the scheduler's)
    const workload = () => rpcCall<{ events: number; done: boolean }>(rpcUrl, 'tributary_getWorkload');
    const state = async () => (await workload()).events;
    let sampling = true;
    // windows in which the localnet answered nothing for over 2 s (a starved process): no scheduler can pay then
    const stalls: { name: string; from: number; recovered: number; to: number }[] = [];
    const sampler = (async () => {
      while (sampling) {
        const asked = Date.now();
        samples.push({ t: Date.now(), events: await state().catch(() => samples.at(-1)?.events ?? 0) });
        if (Date.now() - asked > 2000) stalls.push({ name: 'chain did not answer', from: asked, recovered: Date.now(), to: Date.now() });
        const lag = await cluster.replica?.lagBytes().catch(() => undefined);
        if (lag !== undefined) replicaLags.push(lag);
        await sleep(1000);
      }
    })();
    const windows = await runFaults(faultPlan(cluster, services), async () => (samples.at(-1)?.events ?? 0) / maxEvents, log, deadline);
    await until(async () => (await workload()).done, Math.max(1, (deadline - Date.now()) / 1000), 'the workload to end');
    sampling = false;
    await sampler;
    const workloadEvents = (await workload()).events;
    // the rate between two samples taken while the workload ran: the sample that first sees
    // it complete comes up to a sampling period (1 s and more under load) after the end
    const first = samples.find((s) => s.events > 0) ?? samples[0]!;
    const last = samples.filter((s) => s.events < workloadEvents && s.t > first.t).at(-1) ?? samples.at(-1)!;
    const achieved = (last.events - first.events) / Math.max(1, (last.t - first.t) / 1000);
    log(`workload ended: ${workloadEvents} events; the localnet achieved ${achieved.toFixed(0)} events/s (asked ${S.rate})`);

    // each drain condition may take as long as it keeps progressing (a loaded machine drains slowly), within the run's bound
    const stalled: string[] = [];
    const drain = async (what: string, remaining: () => Promise<number>, detail?: () => Promise<string>) => {
      const at = Date.now();
      let last = Number.POSITIVE_INFINITY;
      let progressed = Date.now();
      for (;;) {
        const left = await remaining().catch(() => last);
        if (left === 0) { log(`drained ${what} in ${((Date.now() - at) / 1000).toFixed(1)} s`); return; }
        if (left < last) { last = left; progressed = Date.now(); }
        if (Date.now() - progressed > S.stallSeconds * 1000 || Date.now() > deadline) {
          log(`${what}: NOT drained, ${left} left, no progress for ${((Date.now() - progressed) / 1000).toFixed(0)} s${detail ? `: ${await detail().catch((e: Error) => e.message)}` : ''}`);
          stalled.push(`${what}: ${left} left`);
          return;
        }
        await sleep(1000);
      }
    };

    // the cut: payment traffic stops; every payment due by then is executed (or settled with the
    // chain's reason) and every metered chunk charged; then the scheduler role stops, so the
    // chain's ledger is final
    // the subscriptions run a while even when the workload ended soon after they were paid
    const settleUntil = settledAt + S.settleSeconds * 1000;
    if (Date.now() < settleUntil) { log(`payment traffic goes on for ${((settleUntil - Date.now()) / 1000).toFixed(0)} s more (SOAK_SETTLE_SECONDS)`); await sleep(settleUntil - Date.now()); }
    await load402.stop();
    const cutS = Math.floor(Date.now() / 1000);
    const served = new Set(deriveActors(S.seed).gateways.map((g) => g.address.toBase58()));
    const policies = servedPolicies(await ledgerOf(rpcUrl), served);
    const settleStart = Date.now();
    const atCut = await dueLeft(db, rpcUrl, policies, cutS).catch((err: Error) => ({ left: -1, detail: err.message }));
    log(`cut at ${cutS}: ${atCut.left} due payments left (${atCut.detail || 'none'}), ${await unsettledLeft(db).catch(() => -1)} metered chunks or charges unsettled`);
    let dueDetail = '';
    await drain('the due payments', async () => { const d = await dueLeft(db, rpcUrl, policies, cutS); dueDetail = d.detail; return d.left; }, async () => dueDetail);
    await drain('the metered usage', () => unsettledLeft(db));
    await drain('the scheduled payments in doubt', () => inDoubtLeft(db));
    const settleSeconds = (Date.now() - settleStart) / 1000;
    for (const n of [...cluster.procs.keys()].filter((k) => k.startsWith('scheduler'))) await cluster.procs.get(n)!.stop();
    const total = async () => (await rpcCall<{ events: number }>(rpcUrl, 'tributary_getState')).events;
    await until(async () => { const a = await total(); await sleep(2000); return a === await total(); }, 60, 'the chain to go quiet');
    const ledger = await ledgerOf(rpcUrl);
    const injected: FaultCounts | undefined = await faultCounts(rpcUrl).catch(() => undefined);
    log(`cut at ${cutS}: due payments and metered usage settled in ${settleSeconds.toFixed(1)} s, scheduler stopped; the ledger holds ${ledger.length} events`);

    // drain: archive, projections, outbox and sockets reach the end of the ledger
    const drainStart = Date.now();
    const expected = paymentsByTrackingId(ledger);
    await drain('the archive', async () => Math.max(0, ledger.length - await archived()));
    // end to end: from the chain's first event until the archive held the last one
    const ingested = ledger.length / Math.max(1, (Date.now() - first.t) / 1000);
    await drain('every consumer group', async () => (await groupInfo(redis, stream)).reduce((a, g) => a + g.pending + (g.lag ?? 0), 0),
      async () => (await groupInfo(redis, stream)).filter((g) => g.pending + (g.lag ?? 0) > 0)
        .map((g) => `${g.name} pending ${g.pending} lag ${g.lag} consumers ${g.consumers} last-delivered ${g.lastDeliveredId}`).join('; '));
    await drain('the outbox', async () => Number((await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '<>', 'delivered').executeTakeFirstOrThrow()).n));
    await drain('the sockets', async () => socketMissing(clients!.clients, expected).missing);
    const drainSeconds = (Date.now() - drainStart) / 1000;
    const reads = await load.stop();
    const replicaLag = await cluster.replica?.lagBytes().catch(() => undefined);

    const records = recordsByPolicy(ledger);
    const allServed = servedPolicies(ledger, served);
    const sched = await scheduleCheck(db, {
      policies: allServed, chain: await readPolicies(rpcUrl, allServed.map((p) => p.address)), records, cutS,
      subscriptions: load402.subscriptions, faults: [...windows, ...stalls], slackMs: SCHEDULER_LEASE_MS,
    });
    const modelChecks = await readModelChecks(db, (line) => process.stdout.write(`${line}\n`));
    const checks: Check[] = [
      { name: 'everything drained', ok: stalled.length === 0, detail: stalled.length === 0 ? 'archive, consumer groups, outbox and sockets reached the end of the ledger' : stalled.join('; ') },
      await archiveCheck(db, ledger),
      await webhookCheck(db, receivers),
      socketCheck(clients.clients, expected, paymentKinds(ledger)),
      ...modelChecks,
      addressReuseCheck(ledger, modelChecks.find((c) => c.name.includes('merchant'))?.ok),
      sched.check,
      await paygCheck(db, { records, paygPolicies: load402.payg, calls: load402.calls, price: PAYG_PRICE, lost: load402.lost, faults: [...windows, ...stalls] }),
      await reconciliationCheck(db, redis, rpcUrl, soakPrefix(cluster)).catch((err: Error) => ({ name: 'reconciliation: no difference', ok: false, detail: `did not run: ${err.message}` })),
    ];
    printReport({
      settings: S, ledger: ledger.length, achieved, ingested, reads, windows: windows.map((w) => ({ ...w, stats: load.window(w.from, w.to) })),
      sockets: clients.totals(), connectedAtEnd: clients.connected(), drainSeconds, replicaLag, replicaLagMax: Math.max(0, ...replicaLags), replicaLagP50: replicaLags.sort((a, b) => a - b)[Math.floor(replicaLags.length / 2)] ?? 0, checks, totalSeconds: (Date.now() - t0) / 1000,
      restarts: [...cluster.procs.entries()].map(([n, p]) => ({ name: n, starts: p.starts() })),
      warnings: logWarnings(path.join(runDir, 'logs')),
      hostile: `localnet faults ${describeInjected(injected)}; CPU hog: ${hog ? hog.what : 'off (SOAK_CPU_HOG=1 turns it on)'}`,
      settlement: `localnet stalls over 2 s: ${stalls.length} (longest ${(Math.max(0, ...stalls.map((x) => x.to - x.from)) / 1000).toFixed(1)} s); ${load402.subscriptions.length} Custom:${S.subPeriod} subscriptions, ${load402.payg.length} pay-as-you-go policies (period ${S.paygPeriod} s) called at ${S.paygRate}/s; after the cut, due payments and metered usage settled in ${settleSeconds.toFixed(1)} s; due -> executed p50 ${sched.figures.lagP50} s, p99 ${sched.figures.lagP99} s, max ${sched.figures.lagMax} s (first scheduled payment, which waits for the read model: p50 ${sched.figures.firstLagP50} s, max ${sched.figures.firstLagMax} s)`,
    });
    redis.disconnect();
    await db.destroy();
    return checks.every((c) => c.ok) ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`[soak] FAILED: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
