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
import { claimDue, releaseHeld } from './outbox-store.js';
import { startFastPath, type FastPath } from './ready-pop.js';
import { claimLeaseMs, leaseMarginMs, type ScheduleConfig } from './schedule.js';
import { deliver, type DeliverDeps, type DeliveryOutcome } from './deliver.js';
import { listenOutbox, type OutboxListener } from './outbox-signal.js';
import { createAttemptRecorder } from './attempt-recorder.js';
import { OUTBOX_CHANNEL, webhookOutcomesKey } from '../../../src/kernel/names/index.js';
import { createRateLimiter } from './rate-limit.js';
import { createSecretKeys } from './secret-keys.js';
import { startPruner, type Pruner } from './retention.js';
import { createFanoutFinisher, expandExpired } from './fanouts.js';
import { createSlots, type Slots } from './worker-slots.js';
import { createWriteTally, startGauges } from './worker-gauges.js';

export interface WorkerStats { claimed: number; outcomes: Record<DeliveryOutcome, number>; errors: number }

export interface WebhookWorker {
  readonly id: string;
  stop: () => Promise<void>;
  stats: () => WorkerStats;
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

const OUTCOME_FLUSH_MS = 1000;

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
  // the record writes of the current gauge period (debug level: ./worker-gauges.ts)
  const tally = createWriteTally();
  const deps: DeliverDeps = {
    db: ctx.db, worker: id, record: createAttemptRecorder(ctx.db, id, { fanouts: finisher, onWrite: tally.note }), poster, schedule, now, logger: log,
    keysOf: createSecretKeys(config.keys.encryptionKey, now),
    limiter: createRateLimiter(ctx.redis, config.redis.prefix),
    retryAfterMaxMs: cfg.retryAfterMaxSeconds * 1000,
  };
  const stopCtl = new AbortController();
  const abortCtl = new AbortController();
  const signals = { stop: stopCtl.signal, abort: abortCtl.signal };
  const stats: WorkerStats = { claimed: 0, outcomes: { delivered: 0, rescheduled: 0, dead: 0, lost: 0, gone: 0, stopped: 0, disabled: 0, deferred: 0 }, errors: 0 };
  const { wake, nap } = createWaker(stopCtl.signal);
  const due = createDueFlag(wake);

  const listener: OutboxListener | undefined = opts.listen === false ? undefined : listenOutbox(config.db.url, OUTBOX_CHANNEL, log, due.signal);
  const pruner: Pruner | undefined = opts.prune === false ? undefined
    : startPruner({ db: ctx.db, logger: log, now }, { retentionDays: cfg.retentionDays, intervalMs: cfg.pruneIntervalMs });
  const outcomes = createOutcomeCounter(ctx.redis, config.redis.prefix);

  const slots = createSlots({
    concurrency: cfg.concurrency, maxWaitMs: leaseMarginMs(schedule) / 2, db: ctx.db, workerId: id, stop: stopCtl.signal,
    slotFreed: due.slotFreed,
    run: (row, release) => deliver(deps, row, signals, { posted: release })
      .then((o) => {
        stats.outcomes[o] += 1;
        outcomes.count(o);
      })
      .catch((err: unknown) => { stats.errors += 1; log.error({ err, deliveryId: row.id }, 'delivery failed unexpectedly'); }),
  });
  const fastPath: FastPath | undefined = opts.fastPath === false || !ctx.redis ? undefined
    : startFastPath({
      db: ctx.db, redis: ctx.redis, prefix: config.redis.prefix, logger: log,
      fanoutDone: (f) => finisher.done(f),
      handedToClaim: due.signal,
      needMs: claimLeaseMs(schedule) - leaseMarginMs(schedule) / 2,
      claimLeaseMs: claimLeaseMs(schedule),
      pushLeaseMs: claimLeaseMs(schedule) + leaseMarginMs(schedule),
      room: slots.room,
      popRoom: slots.popRoom,
      starving: slots.starving,
      roomFreed: slots.roomFreed,
      take(rows) {
        stats.claimed += rows.length;
        slots.ahead.add(rows);
        slots.pump();
      },
    });

  const loop = runClaims({ ctx, log, workerId: id, schedule, pollMs: cfg.pollMs, concurrency: cfg.concurrency, stop: stopCtl.signal, stats, slots, due, nap, fastPath });

  if (log.isLevelEnabled('debug')) {
    startGauges(log, { busy: slots.busy, inflight: () => slots.inflight.size, ahead: () => slots.ahead.size(), fastPath, writes: tally.writes }, stopCtl.signal);
  }

  log.info({ concurrency: cfg.concurrency, timeoutMs: cfg.timeoutMs }, 'webhook worker started');
  return {
    id,
    stats: () => ({ ...stats, outcomes: { ...stats.outcomes } }),
    async stop() {
      stopCtl.abort();
      wake();
      slots.freed(true);
      await loop;
      const cut = setTimeout(() => abortCtl.abort(), cfg.timeoutMs);
      await Promise.allSettled([...slots.inflight]);
      clearTimeout(cut);
      await finisher.flush();
      await outcomes.stop();
      await pruner?.stop();
      await listener?.close();
      if (!opts.poster) poster.close();
      log.info('webhook worker stopped');
    },
  };
}

/** `nap(ms)` resolves after `ms`, or sooner when woken (true when the time ran out); a wake while awake cuts the next nap short. */
function createWaker(stop: AbortSignal): { wake: () => void; nap: (ms: number) => Promise<boolean> } {
  let woken = false;
  let wakeUp: (() => void) | undefined;
  const wake = () => { woken = true; wakeUp?.(); };
  const nap = (ms: number) => new Promise<boolean>((resolve) => {
    if (woken || stop.aborted) { woken = false; resolve(false); return; }
    const t = setTimeout(() => done(true), ms);
    function done(timedOut = false) { clearTimeout(t); wakeUp = undefined; woken = false; resolve(timedOut); }
    wakeUp = done;
  });
  return { wake, nap };
}

/**
 * Whether the outbox may hold due rows beyond the last claim's: a claim that came back
 * short clears it; a notification, rows handed to the claim here, and each poll period
 * set it. A slot that frees wakes the claim only while it is set (under the fast path the
 * outbox is mostly empty, and a claim per finished delivery would cost a round trip each).
 */
interface DueFlag { mayBe: boolean; signals: number; signal: () => void; slotFreed: () => void }

function createDueFlag(wake: () => void): DueFlag {
  const due: DueFlag = {
    mayBe: true,
    signals: 0,
    signal: () => { due.mayBe = true; due.signals += 1; wake(); },
    slotFreed: () => { if (due.mayBe) wake(); },
  };
  return due;
}

/** Outcome counts reach the cluster-wide hash once a second, not one command per delivery. */
function createOutcomeCounter(redis: Redis | undefined, prefix: string): { count: (o: DeliveryOutcome) => void; stop: () => Promise<void> } {
  let unflushed: Partial<Record<DeliveryOutcome, number>> = {};
  const flush = async () => {
    const counts = Object.entries(unflushed);
    unflushed = {};
    if (!redis || counts.length === 0) return;
    const key = webhookOutcomesKey(prefix);
    const pipe = redis.pipeline();
    for (const [o, n] of counts) pipe.hincrby(key, o, n);
    await pipe.exec().catch(() => undefined);
  };
  const flusher = setInterval(() => { void flush(); }, OUTCOME_FLUSH_MS);
  return {
    count: (o) => { unflushed[o] = (unflushed[o] ?? 0) + 1; },
    async stop() { clearInterval(flusher); await flush(); },
  };
}

interface ClaimLoopDeps {
  ctx: WorkerCtx; log: Logger; workerId: string; schedule: ScheduleConfig; pollMs: number; concurrency: number;
  stop: AbortSignal; stats: WorkerStats; slots: Slots; due: DueFlag; nap: (ms: number) => Promise<boolean>; fastPath?: FastPath;
}

/**
 * The claim loop, until stopped. Claims come in batches and run ahead of the slots: up to
 * WEBHOOK_CONCURRENCY deliveries wait claimed, so a slot that frees starts its next
 * delivery at once instead of after a claim's round trip. A claim waits until a quarter
 * of that room is free. Stopping gives back the deliveries claimed or popped but not started.
 */
async function runClaims(d: ClaimLoopDeps): Promise<void> {
  const { ctx, log, slots, due, stats } = d;
  const claimBatch = Math.max(1, Math.floor(d.concurrency / 4));
  let expandedAt = -Infinity;
  while (!d.stop.aborted) {
    if (performance.now() - expandedAt >= EXPAND_EVERY_MS) {
      expandedAt = performance.now();
      // fan-outs of a worker that died, or of a push that was lost: due outbox rows now
      const n = await expandExpired(ctx.db).catch((err: unknown) => {
        log.warn({ err: (err as Error).message }, 'expanding expired fan-outs failed; next time');
        return 0;
      });
      if (n > 0) log.info({ fanouts: n }, 'expanded fan-outs whose lease ended');
    }
    const free = slots.room();
    if (due.mayBe && (free >= claimBatch || (free > 0 && slots.busy() === 0 && slots.ahead.size() === 0))) {
      try {
        const signals = due.signals;
        const rows = await claimDue(ctx.db, d.workerId, free, claimLeaseMs(d.schedule));
        stats.claimed += rows.length;
        slots.ahead.add(rows);
        slots.pump();
        if (rows.length === free) continue; // more may be due
        if (due.signals === signals) due.mayBe = false;
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'claiming deliveries failed; retrying');
        await d.nap(1000);
        continue;
      }
    }
    // rows of the slow schedule and of receivers' pauses come due with time, unannounced
    if (await d.nap(d.pollMs)) due.mayBe = true;
  }
  await d.fastPath?.stop();
  await releaseHeld(ctx.db, d.workerId, slots.ahead.drain()).catch(() => undefined);
}
