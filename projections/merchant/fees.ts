/**
 * What one payment moves, per the program's fee rules (PROGRAM.md §2, shared/fees.rs):
 * with A the payment's amount (PaymentRecord.amount),
 *   total_fee = floor(A · gateway_fee_bps / 10000)
 *   protocol  = floor(total_fee · share / 10000), share = the gateway's custom protocol
 *               share when its flag bit2 is set, else the program config's share
 *   gross mode (flag bit1 clear): the payer pays A, the recipient gets A − total_fee
 *   net mode (bit1 set): the payer pays A + total_fee, the recipient gets A
 * The gateway keeps total_fee − protocol (its residual, out of which scheduler and
 * referral cuts are paid), so gross = net + gatewayFee + protocolFee always.
 *
 * No event carries a gateway's flags or custom share (update_gateway_* emit none), but
 * execute_payment logs what it moved, and the indexer attaches that to the PaymentRecord
 * (`fee_split`): the recipient's amount tells the mode (A − total_fee in gross mode, A in
 * net mode) and the protocol cut is the chain's own figure, whatever share produced it.
 */
import type { FeeSplit } from '../../src/kernel/events/event-types.js';

export interface FeeSettings {
  gatewayFeeBps: number;
  /** flag bit1: the fee is added on top of the amount instead of taken out of it */
  netMode: boolean;
  /** flag bit2's custom protocol share, or null for the program config's */
  customProtocolShareBps: number | null;
}

export interface PaymentSplit {
  /** what left the payer's token account */
  gross: bigint;
  gatewayFee: bigint;
  protocolFee: bigint;
  /** what the recipient received */
  net: bigint;
}

export const DEFAULT_PROTOCOL_SHARE_BPS = 2000;

export const bps = (x: bigint, b: number): bigint => (x * BigInt(b)) / 10_000n;

export function splitPayment(amount: bigint, s: FeeSettings, configShareBps: number): PaymentSplit {
  const totalFee = bps(amount, s.gatewayFeeBps);
  const protocolFee = bps(totalFee, s.customProtocolShareBps ?? configShareBps);
  const gatewayFee = totalFee - protocolFee;
  return s.netMode
    ? { gross: amount + totalFee, gatewayFee, protocolFee, net: amount }
    : { gross: amount, gatewayFee, protocolFee, net: amount - totalFee };
}

/**
 * The split of a payment whose execute_payment logged it: exact for both modes and any
 * protocol share. total_fee is A − recipient in gross mode; in net mode (recipient = A)
 * it is the formula's, and never less than the parts the log shows.
 */
export function splitFromLog(amount: bigint, logged: FeeSplit, gatewayFeeBps: number): PaymentSplit & { netMode: boolean } {
  const net = BigInt(logged.recipient_amount);
  const protocolFee = BigInt(logged.protocol_cut);
  if (net < amount) {
    return { gross: amount, gatewayFee: amount - net - protocolFee, protocolFee, net, netMode: false };
  }
  const shown = BigInt(logged.gateway_residual) + BigInt(logged.scheduler_cut) + protocolFee;
  const formula = bps(amount, gatewayFeeBps);
  const totalFee = formula > shown ? formula : shown;
  return { gross: amount + totalFee, gatewayFee: totalFee - protocolFee, protocolFee, net, netMode: totalFee > 0n };
}
