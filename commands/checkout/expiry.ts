/**
 * The expiry sweep: every `periodMs`, open checkout sessions past their expiry become
 * expired and each is announced once (events.ts, expireDue). It runs in the scheduler
 * role; any number of its processes may sweep at once (rows are taken SKIP LOCKED).
 */
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import { createRounds } from '../../infra/timers/rounds.js';
import type { RoomEmitter } from '../scheduler/lifecycle-events.js';
import { expireDue } from './events.js';

export const CHECKOUT_SWEEP_MS = 5000;

export interface CheckoutExpiryDeps { db: Db; logger: Logger; nowMs: () => number; rooms?: RoomEmitter; periodMs?: number }

export function startCheckoutExpiry(deps: CheckoutExpiryDeps): { stop(): Promise<void> } {
  const rounds = createRounds(async () => {
    // a full batch may leave more behind: sweep again at once
    while (!rounds.stopped && await expireDue(deps, new Date(deps.nowMs())) === 200) { /* next batch */ }
  }, deps.periodMs ?? CHECKOUT_SWEEP_MS, (err) => deps.logger.warn({ err }, 'checkout expiry sweep failed; retrying next round'));
  rounds.start();
  return { stop: () => rounds.stop() };
}
