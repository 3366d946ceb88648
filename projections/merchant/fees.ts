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
 */

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
