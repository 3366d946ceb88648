/**
 * A payment row rendered straight as a COPY line (copy-line.ts) is the line of the row
 * object the model built before (each column through copyField, the doc through doc.ts),
 * byte for byte, for both kinds, with and without a block time and a policy memo, and
 * for texts COPY must escape: backslash, tab, newline, carriage return, quotes, unicode.
 * The escaping itself is checked against what COPY's text format reads back.
 */
import { expect } from 'chai';
import { copyLine, type CopyValue } from '../../infra/postgres/copy.js';
import { paymentAt, pgText } from '../../src/kernel/domain/event-data.js';
import { PAYMENT_MEMO_BYTES, memoFromData, memoToTrackingId } from '../../src/kernel/domain/memo.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { paymentDoc, type PaymentRowLike } from '../../projections/payments/doc.js';
import { PAYMENT_COLUMNS } from '../../projections/payments/projection.js';
import { composableLine, copyText, paymentRecordLine, type PolicyMemo } from '../../projections/payments/copy-line.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { makeEvents } from '../support/anchor-events.js';

// the row objects as the model built them before copy-line.ts (the reference)
function base(e: TributaryEvent<'PaymentRecord' | 'ComposableExecuted'>, policy: string) {
  return {
    event_id: e.id, kind: e.name, policy, gateway: e.data.gateway, signature: e.signature, slot: String(e.slot),
    event_index: e.index, block_time: e.blockTime === null ? null : String(e.blockTime), timestamp: BigInt(e.data.timestamp).toString(),
    at: paymentAt(e).toString(), recipient: e.data.recipient, record_id: String(e.data.record_id),
  };
}
function line(r: PaymentRowLike): string {
  const row: Record<string, unknown> = { ...r, doc: paymentDoc(r) };
  return copyLine(PAYMENT_COLUMNS.map((c) => row[c] as CopyValue));
}
function paymentRow(e: TributaryEvent<'PaymentRecord'>): PaymentRowLike {
  const d = e.data;
  const memo = memoFromData(d, PAYMENT_MEMO_BYTES);
  return {
    ...base(e, d.payment_policy), amount: BigInt(d.amount).toString(), output_amount: null, gateway_fee: null, protocol_fee: null,
    payer: d.payer, token_mint: d.token_mint, target_program: null, memo, tracking_id: pgText(memoToTrackingId(memo)),
  };
}
function composableRow(e: TributaryEvent<'ComposableExecuted'>, memo: PolicyMemo | undefined): PaymentRowLike {
  const d = e.data;
  return {
    ...base(e, d.composable_policy), amount: BigInt(d.input_amount).toString(), output_amount: BigInt(d.output_amount).toString(),
    gateway_fee: BigInt(d.gateway_fee).toString(), protocol_fee: BigInt(d.protocol_fee).toString(),
    payer: null, token_mint: memo?.input_mint ?? null, target_program: d.target_program, memo: memo?.memo ?? null, tracking_id: memo?.tracking_id ?? null,
  };
}

const AWKWARD = ['back\\slash', 'tab\there', 'new\nline', 'cr\rhere', 'quote"s', 'ünïcødé ✓ 🚀', '\\N', '\u2028sep'];

function record(i: number, over: Partial<TributaryEvent<'PaymentRecord'>['data']> = {}, blockTime: number | null = 1_700_000_000 + i): TributaryEvent<'PaymentRecord'> {
  const e = syntheticEvents(1, 7, i)[0] as TributaryEvent<'PaymentRecord'>;
  return { ...e, blockTime, data: { ...e.data, ...over } };
}
function composable(i: number, over: Partial<TributaryEvent<'ComposableExecuted'>['data']> = {}, blockTime: number | null = 1_700_000_000 + i): TributaryEvent<'ComposableExecuted'> {
  const e = record(i, {}, blockTime);
  return {
    ...e, name: 'ComposableExecuted',
    data: {
      composable_policy: e.data.payment_policy, gateway: e.data.gateway, recipient: e.data.recipient, timestamp: e.data.timestamp, record_id: e.data.record_id,
      target_program: 'Prog1111', input_amount: '18446744073709551615', output_amount: '990', gateway_fee: '5', protocol_fee: '0', ...over,
    },
  };
}

describe('payments: rows as COPY lines', () => {
  it('PaymentRecord: the reference row\'s line, with and without a block time', () => {
    for (const e of [...syntheticEvents(200, 3), record(5, {}, null), record(6, { amount: '18446744073709551615', record_id: 2 ** 53 - 1 })]) {
      const r = e as TributaryEvent<'PaymentRecord'>;
      expect(paymentRecordLine(r)).to.equal(line(paymentRow(r)));
    }
  });

  it('random executions of both kinds (extreme values, no block time): the reference row\'s line', () => {
    const memo: PolicyMemo = { memo: Buffer.alloc(32, 65), tracking_id: 'A'.repeat(32), input_mint: null };
    let n = 0;
    for (const e of makeEvents(3000, { seed: 'copy-line', nullBlockTime: 0.1 })) {
      if (e.name === 'PaymentRecord') expect(paymentRecordLine(e)).to.equal(line(paymentRow(e)));
      else if (e.name === 'ComposableExecuted') expect(composableLine(e, memo)).to.equal(line(composableRow(e, memo)));
      else continue;
      n += 1;
    }
    expect(n).to.be.greaterThan(100);
  });

  it('PaymentRecord: memos and keys COPY must escape, and unicode', () => {
    for (const [i, text] of AWKWARD.entries()) {
      const e = record(i, { memo: text.slice(0, 20), payer: `payer ${text}`, recipient: text, token_mint: text, gateway: text, payment_policy: text });
      expect(paymentRecordLine(e), JSON.stringify(text)).to.equal(line(paymentRow(e)));
    }
  });

  it('ComposableExecuted: with its policy\'s memo, without one (not seen yet), without a block time', () => {
    const memo: PolicyMemo = { memo: Buffer.concat([Buffer.from('trk\\1\t"'), Buffer.alloc(24)]), tracking_id: 'trk\\1\t"', input_mint: 'Mint\n1' };
    for (const m of [memo, { ...memo, input_mint: null }, undefined]) {
      for (const e of [composable(1), composable(2, {}, null), composable(3, { target_program: 'tab\tnew\nline\\' })]) {
        expect(composableLine(e, m)).to.equal(line(composableRow(e, m)));
      }
    }
  });

  it('escapes as COPY text reads: backslash, newline, carriage return, tab; the rest as it is', () => {
    expect(copyText('a\\b\tc\nd\re')).to.equal('a\\\\b\\tc\\nd\\re');
    expect(copyText('\\N')).to.equal('\\\\N');
    expect(copyText('ünïcødé ✓ 🚀 "q"')).to.equal('ünïcødé ✓ 🚀 "q"');
    const fields = paymentRecordLine(record(1, { memo: 'x\ty' }, null)).split('\t');
    expect(fields).to.have.length(PAYMENT_COLUMNS.length);
    expect(fields[PAYMENT_COLUMNS.indexOf('block_time')]).to.equal('\\N');
    expect(fields[PAYMENT_COLUMNS.indexOf('output_amount')]).to.equal('\\N');
    expect(fields[PAYMENT_COLUMNS.indexOf('memo')]).to.match(/^\\\\x[0-9a-f]{128}$/);
  });
});
