/**
 * The program's fee split of one payment (shared/fees.rs): every cut is a floor of basis
 * points of the gateway's total fee, and the gateway's residual absorbs the rounding.
 * Gross mode takes the fee out of the amount; net mode (flag 0x02) adds it on top.
 */
import { programError } from './errors.js';

export const FLAG_REFERRAL = 0x01;
export const FLAG_NET_AMOUNT = 0x02;
export const FLAG_CUSTOM_PROTOCOL_SHARE = 0x04;
const U64_MAX = (1n << 64n) - 1n;

export interface FeeInputs {
  amount: bigint;
  gatewayFeeBps: number;
  featureFlags: number;
  /** config.protocol_share_bps */
  protocolShareBps: number;
  customProtocolShareBps: number;
  schedulerShareBps: number;
  referralAllocationBps: number;
}

export interface FeeSplit {
  totalFee: bigint;
  protocol: bigint;
  scheduler: bigint;
  referralPool: bigint;
  /** what the gateway fee account keeps: total fee − protocol − scheduler − referral pool */
  gatewayResidual: bigint;
  /** what the policy's recipient receives */
  recipient: bigint;
  /** what leaves the payer's account at most (the undistributed referral pool stays there) */
  totalFromUser: bigint;
}

/** floor(x·b/10000) in checked u64 */
export function bps(x: bigint, b: number): bigint {
  const product = x * BigInt(b);
  if (product > U64_MAX) throw programError('ArithmeticOverflow');
  return product / 10_000n;
}

export function splitFees(f: FeeInputs): FeeSplit {
  const totalFee = bps(f.amount, f.gatewayFeeBps);
  const share = (f.featureFlags & FLAG_CUSTOM_PROTOCOL_SHARE) !== 0 ? f.customProtocolShareBps : f.protocolShareBps;
  const protocol = bps(totalFee, share);
  const scheduler = bps(totalFee, f.schedulerShareBps);
  const referralPool = (f.featureFlags & FLAG_REFERRAL) !== 0 ? bps(totalFee, f.referralAllocationBps) : 0n;
  const gatewayResidual = totalFee - protocol - scheduler - referralPool;
  if (gatewayResidual < 0n) throw programError('ArithmeticOverflow');
  const net = (f.featureFlags & FLAG_NET_AMOUNT) !== 0;
  const totalFromUser = net ? f.amount + totalFee : f.amount;
  if (totalFromUser > U64_MAX) throw programError('ArithmeticOverflow');
  return { totalFee, protocol, scheduler, referralPool, gatewayResidual, recipient: net ? f.amount : f.amount - totalFee, totalFromUser };
}
