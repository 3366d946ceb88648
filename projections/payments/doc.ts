/**
 * The stored answer of a payment row: the event as the events API shapes events
 * (queries/events/event-schema.ts: envelope, block time as ISO 8601, `data` with the
 * IDL's field names) plus the policy's trackingId, rendered as JSON text when the row is
 * written. Pure: a function of the row alone.
 */
import type { EventData } from '../../src/kernel/events/codec.js';
import type { ApiEvent } from '../../src/kernel/wire/api-event.js';
import type { Insertable } from 'kysely';
import type { PaymentsTable } from './tables.js';

/** The columns a payment row has, whether being written or read back (tables.ts declares them once). */
export type PaymentRowLike = Required<Omit<Insertable<PaymentsTable>, 'doc' | 'at'>>;

/** An execution as the events API shapes it (ApiEvent), with its policy's trackingId. */
export interface Execution extends Omit<ApiEvent, 'name'> {
  name: 'PaymentRecord' | 'ComposableExecuted';
  trackingId: string | null;
}

function data(r: PaymentRowLike): EventData {
  const common = { gateway: r.gateway, recipient: r.recipient, timestamp: r.timestamp, record_id: Number(r.record_id) };
  if (r.kind === 'PaymentRecord') {
    return {
      payment_policy: r.policy, ...common, amount: r.amount, memo: r.tracking_id ?? '',
      memo_hex: (r.memo ?? Buffer.alloc(64)).toString('hex'), payer: r.payer ?? '', token_mint: r.token_mint ?? '',
    };
  }
  return {
    composable_policy: r.policy, ...common, target_program: r.target_program ?? '', input_amount: r.amount,
    output_amount: r.output_amount ?? '0', gateway_fee: r.gateway_fee ?? '0', protocol_fee: r.protocol_fee ?? '0',
  };
}

export function toExecution(r: PaymentRowLike): Execution {
  const blockTime = r.block_time === null ? null : Number(r.block_time);
  // the event id is <signature>:<instruction path>:<index>
  const ixPath = r.event_id.slice(r.signature.length + 1, r.event_id.lastIndexOf(':'));
  // toApiEvent's fields in its order, built at once: one is rendered per payment written
  return {
    id: r.event_id, name: r.kind as Execution['name'], signature: r.signature, slot: Number(r.slot), blockTime,
    timestamp: blockTime === null ? null : new Date(blockTime * 1000).toISOString(), ixPath, index: r.event_index,
    data: data(r), trackingId: r.tracking_id,
  };
}

export function paymentDoc(r: PaymentRowLike): string {
  return JSON.stringify(toExecution(r));
}
