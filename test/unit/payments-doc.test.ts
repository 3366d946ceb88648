/**
 * The payments model's stored answer is the events API's shape of the event (toApiEvent)
 * plus the trackingId, key for key and in that order: the document built at once equals
 * the one built through toApiEvent, with and without a block time, for both kinds.
 */
import { expect } from 'chai';
import { paymentDoc, type PaymentRowLike } from '../../projections/payments/doc.js';
import { toApiEvent } from '../../src/kernel/wire/api-event.js';

function row(kind: 'PaymentRecord' | 'ComposableExecuted', blockTime: number | null): PaymentRowLike {
  return {
    event_id: 'sig1:2.1:3', kind, policy: 'Pol', gateway: 'Gw', signature: 'sig1', slot: '77', event_index: 3, block_time: blockTime === null ? null : String(blockTime),
    timestamp: '1700000001', amount: '1000', output_amount: kind === 'PaymentRecord' ? null : '990', gateway_fee: kind === 'PaymentRecord' ? null : '5',
    protocol_fee: kind === 'PaymentRecord' ? null : '5', payer: kind === 'PaymentRecord' ? 'Payer' : null, recipient: 'Rcpt', token_mint: 'Mint',
    target_program: kind === 'PaymentRecord' ? null : 'Prog', record_id: '9', memo: Buffer.concat([Buffer.from('trk'), Buffer.alloc(61)]), tracking_id: 'trk',
  };
}

describe('payments: the stored answer', () => {
  for (const kind of ['PaymentRecord', 'ComposableExecuted'] as const) {
    for (const blockTime of [1_700_000_000, null]) {
      it(`${kind}, block time ${blockTime ?? 'missing'}: the events API's event plus trackingId, in its key order`, () => {
        const r = row(kind, blockTime);
        const doc = JSON.parse(paymentDoc(r)) as { data: Record<string, unknown> };
        const api = toApiEvent({ id: r.event_id, name: kind, signature: r.signature, slot: String(r.slot), block_time: r.block_time === null ? null : String(r.block_time), ix_path: '2.1', event_index: r.event_index, data: doc.data as never });
        expect(paymentDoc(r)).to.equal(JSON.stringify({ ...api, trackingId: 'trk' }));
      });
    }
  }
});
