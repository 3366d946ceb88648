/**
 * The scheduler loop of one process. Every SCHEDULER_POLL_MS: the served gateways'
 * states from the chain, their signers (one that does not open stops only its gateway),
 * intents for what the policies read model shows due and, every few rounds, for what
 * the chain's own accounts show due (sweep.ts), the payment.upcoming announcements,
 * pauses and resumes (status-changes.ts), then a batch of claimed intents executed with
 * bounded concurrency. Any number of processes run it side by side (intents.ts).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Keypair } from '@solana/web3.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Config } from '../../src/kernel/config/config.js';
import type { ChainIo } from './chain.js';
import { processIntent } from './execute.js';
import { syncGatewayStates } from './gateway-sync.js';
import { claimIntents, enqueueDue, upcoming, upcomingKey, type Intent } from './intents.js';
import { executeBatch } from './execute-batch.js';
import { announceMany, type RoomEmitter } from './lifecycle-events.js';
import type { ExecutorDeps } from './outcomes.js';
import { activeSigners } from './signers.js';
import { createSweeper } from './sweep.js';
import { watchStatusChanges } from './status-changes.js';
import { foldCounts } from './counts.js';
import { createRounds } from '../../infra/timers/rounds.js';
import { createAbsences } from '../settlement/absence.js';

export interface SchedulerDeps {
  db: Db;
  io: ChainIo;
  config: Config;
  logger: Logger;
  nowMs: () => number;
  rooms?: RoomEmitter;
  /** after a lifecycle event is recorded (LifecycleDeps.recorded) */
  recorded?: () => Promise<unknown>;
}

export interface RunningScheduler {
  /** one full round, for tests */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

const UPCOMING_EVERY_TICKS = 10;
/** how often (in rounds) due work is derived from the chain's own accounts (sweep.ts) */
const SWEEP_EVERY_TICKS = 10;
/** how often (in rounds) the counters' deltas are folded into their totals (counts.ts) */
const FOLD_EVERY_TICKS = 10;
/** executions sent in one JSON-RPC batch at most */
const MAX_BATCH = 100;

export function startScheduler(deps: SchedulerDeps, opts: { autoStart?: boolean } = {}): RunningScheduler {
  const s = deps.config.scheduler;
  const log = deps.logger.child({ component: 'scheduler' });
  const me = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  let signers = new Map<string, Keypair>();
  const executor: ExecutorDeps = {
    db: deps.db, io: deps.io, me, logger: log, nowMs: deps.nowMs,
    signerOf: (g) => signers.get(g),
    decide: { dunningScheduleMs: s.dunningScheduleMs, retryMs: s.retryMs, cooldownMs: s.cooldownMs },
    confirmTimeoutMs: deps.config.x402.confirmTimeoutMs, pauseWarning: { lastMs: -Infinity },
    // measured with the scheduler's clock, as the settler measures its own
    absences: createAbsences(s.absenceConfirmMs, deps.nowMs),
    lifecycle: { db: deps.db, nowMs: deps.nowMs, ...(deps.rooms ? { rooms: deps.rooms } : {}), ...(deps.recorded ? { recorded: deps.recorded } : {}) },
  };
  const statusChanges = watchStatusChanges(deps.db, executor.lifecycle);
  const sweeper = createSweeper(deps.db, deps.io);
  let ticks = 0;
  let roundsRun = 0;
  // a long round checks between its steps whether the rounds were stopped (declared below, read only once started)
  const stopping = (): boolean => rounds.stopped;

  /** payment.upcoming for what falls due within the lead time: one query and one outbox statement a round. */
  async function announceUpcoming(nowS: number): Promise<void> {
    const due = await upcoming(deps.db, nowS, s.upcomingLeadSeconds);
    await announceMany(executor.lifecycle, due.map((p) => {
      const dueAt = Number(p.next_payment_due);
      return {
        name: 'payment.upcoming' as const, key: upcomingKey(p.address, dueAt), gateway: p.gateway, policy: p.address,
        trackingId: p.tracking_id, dueAt, details: { dueDate: new Date(dueAt * 1000).toISOString(), variant: p.variant },
      };
    }));
  }

  async function tick(): Promise<void> {
    if (roundsRun++ % FOLD_EVERY_TICKS === 0) await foldCounts(deps.db);
    executor.absences.prune();
    const active = await syncGatewayStates(deps.db, deps.io);
    if (active.length === 0) return;
    signers = await activeSigners(deps.db, deps.config.keys.encryptionKey, log);
    const nowS = Math.floor(deps.nowMs() / 1000);
    if (s.upcomingLeadSeconds > 0 && ticks % UPCOMING_EVERY_TICKS === 0) await announceUpcoming(nowS);
    if (ticks % SWEEP_EVERY_TICKS === 0) await sweep(active, nowS);
    await statusChanges.run();
    ticks += 1;
    // a full claim means more is due: enqueue and claim again at once rather than after the poll interval
    for (let full = true; full && !stopping();) {
      await enqueueDue(deps.db, Math.floor(deps.nowMs() / 1000));
      const claimed = await claimIntents(deps.db, me, s.batchSize, s.leaseMs);
      full = claimed.length === s.batchSize;
      await Promise.all([
        // left in doubt: each resolved on its own against the chain (recover.ts)
        inParallel(claimed.filter((i) => i.status === 'sending'), s.concurrency, (i) => processIntent(executor, i), (i) => ({ policy: i.policy })),
        inBatches(claimed.filter((i) => i.status !== 'sending'), s.concurrency),
      ]);
    }
  }

  /** Due work from the chain's accounts; a failed sweep is logged, the read model goes on bringing what is due. */
  async function sweep(gateways: readonly string[], nowS: number): Promise<void> {
    // due before the next sweep: first tried at its due date
    const horizonS = Math.ceil((2 * SWEEP_EVERY_TICKS * s.pollMs) / 1000);
    try {
      const r = await sweeper.run(gateways, nowS, horizonS);
      if (r.queued > 0 || r.unparked > 0) log.info(r, 'chain sweep: due payments queued from the chain\'s accounts');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'chain sweep failed; the read model still brings due payments');
    }
  }

  /** `run` over the items, `limit` at a time; a failure is logged and its intents wait out their lease. */
  async function inParallel<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>, what: (item: T) => object): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let k = next++; k < items.length && !stopping(); k = next++) {
        const item = items[k]!;
        try {
          await run(item);
        } catch (err) {
          log.warn({ err: (err as Error).message, ...what(item) }, 'execution attempt failed; retried after the lease');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  }

  /**
   * Fresh intents in batches, at most `limit` executions in flight: pipelines of half
   * that each (up to MAX_BATCH a batch), so one batch's confirmations overlap the next
   * one's reads and signing.
   */
  async function inBatches(intents: readonly Intent[], limit: number): Promise<void> {
    const size = Math.max(1, Math.min(MAX_BATCH, Math.ceil(limit / 2)));
    const batches: Intent[][] = [];
    for (let k = 0; k < intents.length; k += size) batches.push(intents.slice(k, k + size));
    await inParallel(batches, Math.max(1, Math.floor(limit / size)), (b) => executeBatch(executor, b), (b) => ({ intents: b.length }));
  }

  const rounds = createRounds(tick, s.pollMs, (err) => log.warn({ err: err.message }, 'scheduler round failed'));
  if (opts.autoStart !== false) rounds.start();

  return {
    tick,
    stop: () => rounds.stop(),
  };
}
