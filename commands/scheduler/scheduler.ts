/**
 * The scheduler loop of one process. Every SCHEDULER_POLL_MS: the served gateways'
 * states from the chain, intents for what the policies read model shows due, the
 * payment.upcoming announcements, then a batch of claimed intents executed with bounded
 * concurrency. Any number of processes run it side by side (intents.ts).
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
import { claimIntents, enqueueDue, upcoming } from './intents.js';
import { announce, type RoomEmitter } from './lifecycle-events.js';
import type { ExecutorDeps } from './outcomes.js';
import { activeSigners } from './signers.js';
import { createRounds } from '../../infra/timers/rounds.js';

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

export function startScheduler(deps: SchedulerDeps, opts: { autoStart?: boolean } = {}): RunningScheduler {
  const s = deps.config.scheduler;
  const log = deps.logger.child({ component: 'scheduler' });
  const me = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  let signers = new Map<string, Keypair>();
  const executor: ExecutorDeps = {
    db: deps.db, io: deps.io, me, logger: log, nowMs: deps.nowMs,
    signerOf: (g) => signers.get(g),
    decide: { dunningScheduleMs: s.dunningScheduleMs, retryMs: s.retryMs, cooldownMs: s.cooldownMs },
    confirmTimeoutMs: deps.config.x402.confirmTimeoutMs,
    lifecycle: { db: deps.db, nowMs: deps.nowMs, ...(deps.rooms ? { rooms: deps.rooms } : {}), ...(deps.recorded ? { recorded: deps.recorded } : {}) },
  };
  let ticks = 0;
  // a long round checks between its steps whether the rounds were stopped (declared below, read only once started)
  const stopping = (): boolean => rounds.stopped;

  async function announceUpcoming(nowS: number): Promise<void> {
    for (const p of await upcoming(deps.db, nowS, s.upcomingLeadSeconds)) {
      const dueAt = Number(p.next_payment_due);
      await announce(executor.lifecycle, {
        name: 'payment.upcoming', key: `payment.upcoming:${p.address}:${dueAt}`, gateway: p.gateway, policy: p.address,
        trackingId: p.tracking_id, dueAt, details: { dueDate: new Date(dueAt * 1000).toISOString(), variant: p.variant },
      });
    }
  }

  async function tick(): Promise<void> {
    const active = await syncGatewayStates(deps.db, deps.io);
    if (active.length === 0) return;
    signers = await activeSigners(deps.db, deps.config.keys.encryptionKey);
    const nowS = Math.floor(deps.nowMs() / 1000);
    await enqueueDue(deps.db, nowS);
    if (s.upcomingLeadSeconds > 0 && ticks % UPCOMING_EVERY_TICKS === 0) await announceUpcoming(nowS);
    ticks += 1;
    const claimed = await claimIntents(deps.db, me, s.batchSize, s.leaseMs);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < claimed.length && !stopping(); i = next++) {
        const intent = claimed[i];
        if (!intent) continue;
        try {
          await processIntent(executor, intent);
        } catch (err) {
          log.warn({ err: (err as Error).message, policy: intent.policy }, 'execution attempt failed; retried after the lease');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(s.concurrency, claimed.length) }, worker));
  }

  const rounds = createRounds(tick, s.pollMs, (err) => log.warn({ err: err.message }, 'scheduler round failed'));
  if (opts.autoStart !== false) rounds.start();

  return {
    tick,
    stop: () => rounds.stop(),
  };
}
