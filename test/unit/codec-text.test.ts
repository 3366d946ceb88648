import { expect } from 'chai';
import { bytesToText } from '../../src/kernel/events/codec.js';
import { makeEvent } from '../support/anchor-events.js';

describe('codec: text fields', () => {
  it('strips trailing NULs and keeps interior ones out of the JSON text', () => {
    expect(bytesToText([0x61, 0x62, 0, 0])).to.equal('ab');
    expect(bytesToText([0x61, 0, 0x62, 0])).to.equal('a\uFFFDb');
  });
  it('keeps the raw memo bytes beside the text', () => {
    const e = makeEvent('PaymentRecord', { memo: [0x61, 0, 0x62] });
    expect(e.data['memo']).to.equal('a\uFFFDb');
    expect((e.data['memo_hex'] as string).slice(0, 6)).to.equal('610062');
    expect(JSON.stringify(e.data)).not.to.contain('\\u0000');
  });
});
