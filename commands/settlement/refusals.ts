/**
 * What becomes of metered usage whose charge the chain refused: a pure function of the
 * refusal, the policy's earlier refusals and the clock (the settler writes what it says).
 *
 *   never billable  the policy is deleted, completed or expired, the charge exceeds the
 *                   room left under the period's cap, or the signer may never charge it
 *                   (failure class `dropped`): the usage is marked unbillable with the
 *                   chain's reason at once.
 *   transient       RPC and blockhash errors: the usage goes back and is charged again
 *                   within seconds; not counted.
 *   program paused  the program's emergency pause (its admin's, not the payer's): the
 *                   usage goes back and is charged once the pause is lifted (the config
 *                   is read again every few seconds); not counted, never given up for it.
 *   refused         the payer cannot pay (balance, delegation), the policy was paused
 *                   after it was read, or any other refusal:
 *                   retried on the retry schedule (SCHEDULER_DUNNING_SCHEDULE); the
 *                   refusal after its last step gives the usage up, marked unbillable with
 *                   the chain's reason and reported, never retried silently for ever.
 *
 * A paused policy's usage waits (it may be resumed) as long as the whole schedule, then is
 * given up the same way.
 */
import type { Failure } from '../scheduler/failure.js';
import { PROGRAM_PAUSED_WAIT_MS, programErrorText } from '../scheduler/failure.js';

export interface RefusalOptions { nowMs: number; scheduleMs: readonly number[]; retryMs: number }

export type RefusalOutcome =
  | { kind: 'unbillable'; outcome: 'dropped' | 'given_up'; reason: string }
  | { kind: 'retry'; outcome: 'retry' | 'past_due'; atMs: number };

/** `earlier`: the counted refusals of the policy's charges since its last executed one. */
export function afterRefusedCharge(f: Failure, earlier: number, o: RefusalOptions): RefusalOutcome {
  // paused after the settler read it: it may be resumed, so it waits on the schedule like a payer who cannot pay
  const cls = f.code === 'PolicyPaused' ? 'past_due' : f.class;
  switch (cls) {
    case 'dropped':
      return { kind: 'unbillable', outcome: 'dropped', reason: f.reason };
    case 'transient':
      return { kind: 'retry', outcome: 'retry', atMs: o.nowMs + o.retryMs };
    case 'paused':
      return { kind: 'retry', outcome: 'retry', atMs: o.nowMs + PROGRAM_PAUSED_WAIT_MS };
    case 'past_due':
    case 'failed': {
      const delay = o.scheduleMs[earlier];
      if (delay === undefined) {
        return { kind: 'unbillable', outcome: 'given_up', reason: `${f.reason} (refused ${earlier + 1} times; the retry schedule is spent)` };
      }
      return { kind: 'retry', outcome: 'past_due', atMs: o.nowMs + delay };
    }
    default: {
      const never: never = cls;
      throw new Error(`unknown failure class ${String(never)}`);
    }
  }
}

/** When the policy's next charge may be tried after `earlier` counted refusals, the last at `lastAtMs`. */
export function nextChargeAtMs(earlier: number, lastAtMs: number, scheduleMs: readonly number[]): number {
  if (earlier === 0) return 0;
  return lastAtMs + (scheduleMs[earlier - 1] ?? 0);
}

/** A paused policy's usage, waiting since `oldestMs`: still waiting, or given up with the chain's reason. */
export function pausedUsage(oldestMs: number, o: RefusalOptions): RefusalOutcome | undefined {
  const patience = o.scheduleMs.reduce((a, b) => a + b, 0);
  if (o.nowMs - oldestMs < patience) return undefined;
  return { kind: 'unbillable', outcome: 'given_up', reason: `${programErrorText('PolicyPaused')}: the policy stayed paused past the retry schedule` };
}

/** The chain's cap refusal of pay-as-you-go (the program names it InsufficientDelegatedAmount) is never billable. */
export function capExceeded(amount: bigint, roomLeft: bigint, cap: bigint): Failure {
  return {
    class: 'dropped', code: 'InsufficientDelegatedAmount',
    reason: `${programErrorText('InsufficientDelegatedAmount')}: the charge of ${amount} exceeds the ${roomLeft} left under the period's cap of ${cap}`,
  };
}
