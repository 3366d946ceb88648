/**
 * A delivery worker: keeps up to WEBHOOK_CONCURRENCY requests in flight, and up to as many
 * due outbox rows claimed ahead, so a slot that frees starts its next delivery at once (a
 * slot frees when its POST has succeeded; the record is committed meanwhile). It wakes on the projection's NOTIFY, when a delivery
 * ends, and every WEBHOOK_POLL_MS (rows whose retry time has come, missed notifications).
 * Any number of workers, in any number of processes, share the outbox (SKIP LOCKED).
 *
 * Stop: no new claims and no more waiting between quick retries (those leases, and those
 * of rows claimed ahead, are given back at once); requests in flight get one timeout to finish, then are cut.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { Config } from '../../../src/kernel/config/config.js';
import type { Clock } from '../../../src/kernel/domain/clock.js';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';
import { createJsonPoster, type JsonPoster } from '../../../infra/http/post-json.js';
import { API_VERSION } from '../../../src/kernel/http/version.js';
import { claimDue, releaseHeld, type ClaimedDelivery } from './outbox-store.js';
import { startFastPath, type FastPath } from './ready-pop.js';
import { claimLeaseMs, leaseMarginMs, type ScheduleConfig } from './schedule.js';
import { createReadyQueue } from './ready-queue.js';
import { deliver, type DeliverDeps, type DeliveryOutcome } from './deliver.js';
import { listenOutbox, type OutboxListener } from './outbox-signal.js';
import { createAttemptRecorder } from './attempt-recorder.js';
import { OUTBOX_CHANNEL, webhookOutcomesKey } from '../../../src/kernel/names/index.js';
import { createRateLimiter } from './rate-limit.js';
import { createSecretKeys } from './secret-keys.js';
import { startPruner, type Pruner } from './retention.js';
import { createFanoutFinisher, expandExpired } from './fanouts.js';

export interface WorkerStats { claimed: number; outcomes: Record<DeliveryOutcome, number>; errors: number }

export interface WebhookWorker {
  readonly id: string;
  stop(): Promise<void>;
  stats(): WorkerStats;
}

export interface WorkerOptions {
  /** default: an HTTP client behind the SSRF guard (unless allowPrivateTargets) */
  poster?: JsonPoster;
  /** default true: LISTEN for the projection's notifications */
  listen?: boolean;
  /** default true: prune old deliveries (retention) */
  prune?: boolean;
  /** default true (with Redis): take first attempts the projection pushes (./ready-pop.ts) */
  fastPath?: boolean;
}

/** A worker's collaborators; without Redis, outcome counts and the per-target limiter stay local. */
interface WorkerCtx { config: Config; db: Db; logger: Logger; clock: Clock; redis?: Redis }

/** Deliveries a worker may have in flight, POSTing or recording, per slot of WEBHOOK_CONCURRENCY. */
const RECORDING_FACTOR = 4;

const OUTCOME_FLUSH_MS = 1000;

/** The period of the debug-level gauges. */
const GAUGE_MS = 500;

/** How often a worker looks for fan-outs whose lease ended (./fanouts.ts), at most. */
const EXPAND_EVERY_MS = 500;

/** Cluster-wide outcome counts, read by /metrics on any API node. */
export { webhookOutcomesKey };

export function startWebhookWorker(ctx: WorkerCtx, opts: WorkerOptions = {}): WebhookWorker {
  const { config } = ctx;
  const cfg = config.webhooks;
  const id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const log = ctx.logger.child({ worker: id });
  const poster = opts.poster ?? createJsonPoster({
    allowPrivateTargets: cfg.allowPrivateTargets, maxSockets: cfg.concurrency, userAgent: `tributary-webhooks/${API_VERSION}`,
  });
  const schedule: ScheduleConfig = { timeoutMs: cfg.timeoutMs, retryDelaysMs: cfg.retryDelaysMs, slowScheduleMs: cfg.slowScheduleMs };
  const now = () => ctx.clock.now();
  // finished fan-outs are deleted by the recorder's next write (./fanouts.ts)
  const finisher = createFanoutFinisher(ctx.db);
  // the record writes of the current gauge period (debug level: see `gauges` below)
  const writes = { n: 0, records: 0, ms: 0, maxMs: 0 };
  const noteWrite = (records: number, ms: number) => {
    writes.n += 1;
    writes.records += records;
    writes.ms += ms;
    writes.maxMs = Math.max(writes.maxMs, ms);
  };
  const deps: DeliverDeps = {
    db: ctx.db, worker: id, record: createAttemptRecorder(ctx.db, id, { fanouts: finisher, onWrite: noteWrite }), poster, schedule, now, logger: log,
    keysOf: createSecretKeys(config.keys.encryptionKey, now),
    limiter: createRateLimiter(ctx.redis, config.redis.prefix),
    retryAfterMaxMs: cfg.retryAfterMaxSeconds * 1000,
  };
  const stopCtl = new AbortController();
  const abortCtl = new AbortController();
  const signals = { stop: stopCtl.signal, abort: abortCtl.signal };
  const stats: WorkerStats = { claimed: 0, outcomes: { delivered: 0, rescheduled: 0, dead: 0, lost: 0, gone: 0, stopped: 0, disabled: 0, deferred: 0 }, errors: 0 };
  const inflight = new Set<Promise<void>>();

  let woken = false;
  let wakeUp: (() => void) | undefined;
  const wake = () => { woken = true; wakeUp?.(); };
  /** Resolves after `ms`, or sooner when woken; true when the time ran out. */
  const nap = (ms: number) => new Promise<boolean>((resolve) => {
    if (woken || stopCtl.signal.aborted) { woken = false; resolve(false); return; }
    const t = setTimeout(() => done(true), ms);
    function done(timedOut = false) { clearTimeout(t); wakeUp = undefined; woken = false; resolve(timedOut); }
    wakeUp = done;
  });

  // Whether the outbox may hold due rows beyond the last claim's: a claim that came back
  // short clears it; a notification, rows handed to the claim here, and each poll period
  // set it. A slot that frees wakes the claim only while it is set: under the fast path
  // the outbox is mostly empty, and a claim per finished delivery was most of the
  // database's round trips.
  let mayBeDue = true;
  let dueSignals = 0;
  const signalDue = () => { mayBeDue = true; dueSignals += 1; wake(); };
  const slotFreed = () => { if (mayBeDue) wake(); };

  const listener: OutboxListener | undefined = opts.listen === false ? undefined : listenOutbox(config.db.url, OUTBOX_CHANNEL, log, signalDue);
  const pruner: Pruner | undefined = opts.prune === false ? undefined
    : startPruner({ db: ctx.db, logger: log, now }, { retentionDays: cfg.retentionDays, intervalMs: cfg.pruneIntervalMs });

  // Outcome counts reach the cluster-wide hash once a second, not one command per delivery.
  let unflushed: Partial<Record<DeliveryOutcome, number>> = {};
  const flushOutcomes = async () => {
    const counts = Object.entries(unflushed);
    unflushed = {};
    if (!ctx.redis || counts.length === 0) return;
    const key = webhookOutcomesKey(config.redis.prefix);
    const pipe = ctx.redis.pipeline();
    for (const [o, n] of counts) pipe.hincrby(key, o, n);
    await pipe.exec().catch(() => undefined);
  };
  const flusher = setInterval(() => { void flushOutcomes(); }, OUTCOME_FLUSH_MS);

  // A slot is an HTTP request: it frees as soon as a delivery's POST succeeds, while its
  // record is still being committed (group commit), so the database's latency does not
  // throttle the requests. Deliveries still recording are bounded by RECORDING_FACTOR.
  let busy = 0;
  const maxInflight = cfg.concurrency * RECORDING_FACTOR;
  // real time, not the application clock (tests move that one by days)
  const ahead = createReadyQueue(cfg.concurrency, leaseMarginMs(schedule) / 2, () => performance.now());

  function launch(row: ClaimedDelivery): void {
    busy += 1;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      busy -= 1;
      pump();
      slotFreed();
      freed();
    };
    const p = deliver(deps, row, signals, { posted: release })
      .then((o) => {
        stats.outcomes[o] += 1;
        unflushed[o] = (unflushed[o] ?? 0) + 1;
      })
      .catch((err: unknown) => { stats.errors += 1; log.error({ err, deliveryId: row.id }, 'delivery failed unexpectedly'); })
      .finally(() => { inflight.delete(p); release(); slotFreed(); freed(); });
    inflight.add(p);
  }

  /** Starts deliveries claimed ahead while slots are free; gives back those that waited too long. */
  function pump(): void {
    if (stopCtl.signal.aborted) return;
    const stale = ahead.stale();
    if (stale.length > 0) void releaseHeld(ctx.db, id, stale).catch(() => undefined);
    while (busy < cfg.concurrency && inflight.size < maxInflight) {
      const row = ahead.take();
      if (!row) break;
      launch(row);
    }
  }

  // Room for more deliveries, claimed or pushed: as many as the slots and the recording bound allow, twice the slots ahead.
  const room = () => Math.min(2 * cfg.concurrency - busy, maxInflight - inflight.size) - ahead.size();
  let roomWaiters: (() => void)[] = [];
  // a pop waits for half a worker's slots of room while a quarter are still waiting claimed or popped (./ready-pop.ts)
  const popRoom = Math.max(1, Math.floor(cfg.concurrency / 2));
  const starving = () => ahead.size() < Math.max(1, Math.floor(cfg.concurrency / 4));
  /** Wakes the pop waiting for room, once there is room enough for it (`always`: stopping). */
  function freed(always = false): void {
    if (roomWaiters.length === 0) return;
    if (!always) {
      const r = room();
      if (r <= 0 || (r < popRoom && !starving())) return;
    }
    const ws = roomWaiters;
    roomWaiters = [];
    for (const w of ws) w();
  }
  const fastPath: FastPath | undefined = opts.fastPath === false || !ctx.redis ? undefined
    : startFastPath({
      db: ctx.db, redis: ctx.redis, prefix: config.redis.prefix, logger: log,
      fanoutDone: (f) => finisher.done(f),
      handedToClaim: signalDue,
      needMs: claimLeaseMs(schedule) - leaseMarginMs(schedule) / 2,
      claimLeaseMs: claimLeaseMs(schedule),
      pushLeaseMs: claimLeaseMs(schedule) + leaseMarginMs(schedule),
      room,
      popRoom,
      starving,
      roomFreed: () => new Promise<void>((resolve) => {
        roomWaiters.push(resolve);
        setTimeout(resolve, 100); // a slot that frees without a signal (a quick retry's wait) is seen anyway
      }),
      take(rows) {
        stats.claimed += rows.length;
        ahead.add(rows);
        pump();
      },
    });

  // Claims come in batches and run ahead of the slots: up to WEBHOOK_CONCURRENCY deliveries
  // wait claimed, so a slot that frees starts its next delivery at once instead of after a
  // claim's round trip (serial claims of the free slots alone capped a worker at one batch
  // per round trip). A claim waits until a quarter of that room is free.
  const claimBatch = Math.max(1, Math.floor(cfg.concurrency / 4));

  let expandedAt = -Infinity;
  const loop = (async () => {
    while (!stopCtl.signal.aborted) {
      if (performance.now() - expandedAt >= EXPAND_EVERY_MS) {
        expandedAt = performance.now();
        // fan-outs of a worker that died, or of a push that was lost: due outbox rows now
        const n = await expandExpired(ctx.db).catch((err: unknown) => {
          log.warn({ err: (err as Error).message }, 'expanding expired fan-outs failed; next time');
          return 0;
        });
        if (n > 0) log.info({ fanouts: n }, 'expanded fan-outs whose lease ended');
      }
      const free = room();
      if (mayBeDue && (free >= claimBatch || (free > 0 && busy === 0 && ahead.size() === 0))) {
        try {
          const signals = dueSignals;
          const rows = await claimDue(ctx.db, id, free, claimLeaseMs(schedule));
          stats.claimed += rows.length;
          ahead.add(rows);
          pump();
          if (rows.length === free) continue; // more may be due
          if (dueSignals === signals) mayBeDue = false;
        } catch (err) {
          log.warn({ err: (err as Error).message }, 'claiming deliveries failed; retrying');
          await nap(1000);
          continue;
        }
      }
      // rows of the slow schedule and of receivers' pauses come due with time, unannounced
      if (await nap(cfg.pollMs)) mayBeDue = true;
    }
    // stopping: deliveries claimed or popped but not started go back at once
    await fastPath?.stop();
    await releaseHeld(ctx.db, id, ahead.drain()).catch(() => undefined);
  })();

  // At debug level only: every GAUGE_MS of wall clock, what held deliveries back (the
  // webhooks bench lines these up with its slow deliveries).
  let gauges: NodeJS.Timeout | undefined;
  if (log.isLevelEnabled('debug')) {
    let last = fastPath?.counts();
    let peak = { busy: 0, inflight: 0, ahead: 0 };
    const sample = setInterval(() => {
      peak = { busy: Math.max(peak.busy, busy), inflight: Math.max(peak.inflight, inflight.size), ahead: Math.max(peak.ahead, ahead.size()) };
    }, 5);
    const report = () => {
      const c = fastPath?.counts();
      const d = c && last ? { pops: c.pops - last.pops, entries: c.entries - last.entries, roomWaitMs: Math.round(c.roomWaitMs - last.roomWaitMs), popMs: Math.round(c.popMs - last.popMs), prepMs: Math.round(c.prepMs - last.prepMs) } : undefined;
      last = c;
      log.debug({ gauges: { t: Math.floor(Date.now() / GAUGE_MS) * GAUGE_MS - GAUGE_MS, ...peak, fastPath: d, writes: { ...writes, ms: Math.round(writes.ms), maxMs: Math.round(writes.maxMs) } } }, 'webhook worker gauges');
      peak = { busy: 0, inflight: 0, ahead: 0 };
      Object.assign(writes, { n: 0, records: 0, ms: 0, maxMs: 0 });
    };
    const align = setTimeout(() => { report(); gauges = setInterval(report, GAUGE_MS); }, GAUGE_MS - (Date.now() % GAUGE_MS));
    gauges = align;
    stopCtl.signal.addEventListener('abort', () => { clearInterval(sample); clearTimeout(align); clearInterval(gauges); }, { once: true });
  }

  log.info({ concurrency: cfg.concurrency, timeoutMs: cfg.timeoutMs }, 'webhook worker started');
  return {
    id,
    stats: () => ({ ...stats, outcomes: { ...stats.outcomes } }),
    async stop() {
      stopCtl.abort();
      wake();
      freed(true);
      await loop;
      const cut = setTimeout(() => abortCtl.abort(), cfg.timeoutMs);
      await Promise.allSettled([...inflight]);
      clearTimeout(cut);
      await finisher.flush();
      clearInterval(flusher);
      await flushOutcomes();
      await pruner?.stop();
      await listener?.close();
      if (!opts.poster) poster.close();
      log.info('webhook worker stopped');
    },
  };
}
