/**
 * The `payment` message, the same whether it comes live from the notifier or from the
 * payments read model during catch-up:
 *
 *   { type: "payment_notification", timestamp: <ms when sent>,
 *     data: { trackingId, signature, slot, amount, tokenMint, policyAddress, gateway,
 *             payer, recipient, recordId, timestamp, status } }
 *
 * PaymentRecord: every field from the event; trackingId is its memo (UTF-8, trailing NULs
 * stripped). ComposableExecuted (a composable policy's execution, trackingId = the policy's
 * 32-byte memo): policyAddress = the composable policy, amount = input_amount, tokenMint =
 * the input mint, payer = the owner of the policy's user payment (null while unknown).
 * amount is a decimal string (u64); slot, recordId and timestamp (the program's clock,
 * unix seconds) are numbers; status is the commitment the service reads the chain at.
 */
import { PAYMENT_MEMO_BYTES, memoFromData, memoToTrackingId } from '../../src/kernel/domain/memo.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

export interface PaymentData {
  trackingId: string;
  signature: string;
  slot: number;
  amount: string;
  tokenMint: string | null;
  policyAddress: string;
  gateway: string;
  payer: string | null;
  recipient: string;
  recordId: number;
  timestamp: number;
  status: string;
}

export interface PaymentNotification {
  type: 'payment_notification';
  data: PaymentData;
  timestamp: number;
}

/** What one socket must not receive twice (signature + record id, as the client sees them). */
export function paymentKey(d: Pick<PaymentData, 'signature' | 'recordId'>): string {
  return `${d.signature}:${d.recordId}`;
}

export function notification(data: PaymentData, nowMs: number): PaymentNotification {
  return { type: 'payment_notification', data, timestamp: nowMs };
}

export function paymentRecordData(e: TributaryEvent<'PaymentRecord'>, status: string): PaymentData {
  const d = e.data;
  return {
    trackingId: memoToTrackingId(memoFromData(d, PAYMENT_MEMO_BYTES)),
    signature: e.signature,
    slot: e.slot,
    amount: BigInt(d.amount).toString(),
    tokenMint: d.token_mint,
    policyAddress: d.payment_policy,
    gateway: d.gateway,
    payer: d.payer,
    recipient: d.recipient,
    recordId: d.record_id,
    timestamp: Number(BigInt(d.timestamp)),
    status,
  };
}

/** A composable policy as the composable read model knows it. */
export interface ComposableRef { trackingId: string; owner: string | null; tokenMint: string | null }

export function composableExecutedData(e: TributaryEvent<'ComposableExecuted'>, policy: ComposableRef, status: string): PaymentData {
  const d = e.data;
  return {
    trackingId: policy.trackingId,
    signature: e.signature,
    slot: e.slot,
    amount: BigInt(d.input_amount).toString(),
    tokenMint: policy.tokenMint,
    policyAddress: d.composable_policy,
    gateway: d.gateway,
    payer: policy.owner,
    recipient: d.recipient,
    recordId: d.record_id,
    timestamp: Number(BigInt(d.timestamp)),
    status,
  };
}
