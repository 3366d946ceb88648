/**
 * What happens to an execution intent after one attempt: a pure function of the intent's
 * counters, the attempt's outcome and the clock. The scheduler writes what it returns and
 * announces its events; the unit tests read it as given/when/then.
 */
import { PROGRAM_PAUSED_WAIT_MS, type Failure } from './failure.js';
import type { IntentStatus } from './tables.js';

export interface IntentCounters {
  status: IntentStatus;
  dunningStep: number;
  consecutiveFailures: number;
}

export interface DecideOptions {
  nowMs: number;
  dunningScheduleMs: readonly number[];
  retryMs: number;
  cooldownMs: number;
  /** consecutive failures that put a policy in cooldown */
  cooldownAfter?: number;
}

export type LifecycleEventName =
  | 'payment.upcoming' | 'payment.failed' | 'subscription.past_due' | 'subscription.recovered' | 'subscription.canceled'
  | 'subscription.paused' | 'subscription.resumed';

export interface Decision {
  status: IntentStatus;
  dunningStep: number;
  consecutiveFailures: number;
  /** when the next attempt may run; undefined when the intent is finished */
  nextAttemptAtMs?: number;
  /** the outcome kept in execution_attempts */
  outcome: 'executed' | 'dropped' | 'paused' | 'past_due' | 'retry' | 'cooldown' | 'given_up';
  events: LifecycleEventName[];
}

export function afterSuccess(c: IntentCounters): Decision {
  const wasPastDue = c.dunningStep > 0;
  return {
    status: 'executed', dunningStep: c.dunningStep, consecutiveFailures: 0, outcome: 'executed',
    events: wasPastDue ? ['subscription.recovered'] : [],
  };
}

export function afterFailure(c: IntentCounters, f: Failure, o: DecideOptions): Decision {
  switch (f.class) {
    case 'dropped':
      // a paused policy's due date is still owed once it is resumed (the chain does not move it): parked, not ended
      if (f.code === 'PolicyPaused') return { status: 'paused', dunningStep: c.dunningStep, consecutiveFailures: 0, outcome: 'paused', events: [] };
      return { status: 'dropped', dunningStep: c.dunningStep, consecutiveFailures: 0, outcome: 'dropped', events: [] };
    case 'past_due': {
      const step = c.dunningStep + 1;
      const delay = o.dunningScheduleMs[step - 1];
      if (delay === undefined) {
        return { status: 'given_up', dunningStep: step, consecutiveFailures: 0, outcome: 'given_up', events: ['payment.failed', 'subscription.canceled'] };
      }
      return {
        status: 'past_due', dunningStep: step, consecutiveFailures: 0, nextAttemptAtMs: o.nowMs + delay, outcome: 'past_due',
        events: step === 1 ? ['payment.failed', 'subscription.past_due'] : ['payment.failed'],
      };
    }
    case 'paused':
      // the program's emergency pause is not the payer's: nothing counted, tried again once it may be lifted
      return {
        status: c.status === 'past_due' ? 'past_due' : 'pending', dunningStep: c.dunningStep, consecutiveFailures: c.consecutiveFailures,
        nextAttemptAtMs: o.nowMs + PROGRAM_PAUSED_WAIT_MS, outcome: 'retry', events: [],
      };
    case 'transient':
    case 'failed': {
      const failures = c.consecutiveFailures + 1;
      const keep = c.status === 'past_due' ? 'past_due' : 'pending';
      if (failures >= (o.cooldownAfter ?? 3)) {
        return { status: keep, dunningStep: c.dunningStep, consecutiveFailures: 0, nextAttemptAtMs: o.nowMs + o.cooldownMs, outcome: 'cooldown', events: [] };
      }
      return { status: keep, dunningStep: c.dunningStep, consecutiveFailures: failures, nextAttemptAtMs: o.nowMs + o.retryMs, outcome: 'retry', events: [] };
    }
    default: {
      const never: never = f.class;
      throw new Error(`unknown failure class ${String(never)}`);
    }
  }
}
