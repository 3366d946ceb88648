/** Policy terms the workload asks for: all five types, amounts in the mint's base units. */
import { PublicKey } from '@solana/web3.js';
import type { Prng } from './prng.js';
import { bn, fixedText, zeros, type ForwardConfig, type PaymentFrequency, type PolicyType } from './program/model.js';

const HOUR = 3_600;
const DAY = 86_400;

const FREQUENCIES: PaymentFrequency[] = [
  { Daily: {} }, { Weekly: {} }, { Monthly: {} }, { Quarterly: {} }, { SemiAnnually: {} }, { Annually: {} },
];

function tokens(prng: Prng, decimals: number, lo: number, hi: number): ReturnType<typeof bn> {
  return bn(BigInt(prng.between(lo, hi)) * 10n ** BigInt(decimals) + BigInt(prng.int(100)));
}

export function randomPolicyType(prng: Prng, scheduleNow: number, decimals: number): PolicyType {
  switch (prng.int(5)) {
    case 0: {
      const custom = prng.chance(0.4);
      return {
        Subscription: {
          amount: tokens(prng, decimals, 1, 50), auto_renew: prng.chance(0.8),
          max_renewals: prng.chance(0.4) ? prng.between(2, 12) : null,
          payment_frequency: custom ? { Custom: { 0: bn(prng.between(HOUR, 3 * DAY)) } } : prng.pick(FREQUENCIES.slice(0, 3)),
          // zero means "start now": the program moves a due date in the past to the present
          next_payment_due: prng.chance(0.7) ? bn(0) : bn(scheduleNow + prng.between(HOUR, 2 * DAY)), padding: zeros(97),
        },
      };
    }
    case 1: {
      const total = prng.between(1, 4);
      const stamps = [1, 2, 3, 4].map((k) => bn(scheduleNow + k * prng.between(6 * HOUR, 3 * DAY)));
      const amounts = [0, 1, 2, 3].map((k) => (k < total ? tokens(prng, decimals, 10, 500) : bn(0)));
      return {
        Milestone: {
          milestone_amounts: amounts, milestone_timestamps: stamps, current_milestone: 0, release_condition: prng.int(2),
          total_milestones: total, escrow_amount: amounts.reduce((a, b) => a.add(b), bn(0)), padding: zeros(53),
        },
      };
    }
    case 2:
      return {
        PayAsYouGo: {
          max_amount_per_period: tokens(prng, decimals, 100, 1_000), max_chunk_amount: tokens(prng, decimals, 5, 50),
          period_length_seconds: bn(prng.pick([DAY, 7 * DAY, 30 * DAY])), current_period_start: bn(0),
          current_period_total: bn(0), expiry_date: prng.chance(0.5) ? null : bn(scheduleNow + 365 * DAY), padding: zeros(79),
        },
      };
    case 3:
      return {
        OneTime: {
          amount: tokens(prng, decimals, 5, 200), due_date: bn(scheduleNow + prng.between(0, DAY)),
          expiry_date: prng.chance(0.5) ? null : bn(scheduleNow + 90 * DAY), padding: zeros(103),
        },
      };
    default:
      return {
        UpTo: {
          max_amount: tokens(prng, decimals, 10, 300), valid_after: bn(scheduleNow + prng.between(0, 12 * HOUR)),
          deadline: bn(scheduleNow + 60 * DAY), padding: zeros(104),
        },
      };
  }
}

/** trackingId memos ("trk-<n>"), sometimes a full 64 bytes with no NUL, sometimes empty. */
export function randomMemo(prng: Prng, n: number, size: number): number[] {
  const r = prng.next();
  if (r < 0.05) return zeros(size);
  if (r < 0.1) return fixedText(`trk-${n}-`.padEnd(size, 'x'), size);
  return fixedText(`trk-${n}`, size);
}

/** A composable policy's forward leg: disabled (same mint) or a pinned program call. */
export function randomForward(prng: Prng, mint: PublicKey, target: PublicKey): ForwardConfig {
  const enabled = prng.chance(0.5);
  const check = { offset: 0, length: 8, expected: Array.from({ length: 8 }, () => prng.int(256)) };
  const empty = { offset: 0, length: 0, expected: zeros(8) };
  const pin = { index: 0, pubkey: PublicKey.default };
  return {
    instruction_constraint: {
      program_id: enabled ? target : PublicKey.default, num_data_checks: enabled ? 1 : 0,
      data_checks: [enabled ? check : empty, empty, empty, empty], num_pinned_accounts: 0, pinned_accounts: [pin, pin, pin, pin],
    },
    input_mint: mint, output_mint: mint, forward_flags: 0,
  };
}
