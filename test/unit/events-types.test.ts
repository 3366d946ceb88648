/**
 * The typed events: src/kernel/events/event-types.ts is what the generator makes of the vendored
 * IDL (regenerate with `node --import tsx infra/scripts/generate-event-types.ts`), and a
 * stream entry becomes a typed event only when its data has the IDL's shape.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { OUTPUT, readIdl, renderEventTypes } from '../../infra/scripts/generate-event-types.js';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import { parseEvent, serializeEvent } from '../../src/kernel/events/envelope.js';
import { makeEvent } from '../support/anchor-events.js';

describe('typed events', () => {
  it('the checked-in event-types.ts matches the IDL', () => {
    expect(readFileSync(OUTPUT, 'utf8'), 'src/kernel/events/event-types.ts is stale: run the generator').to.equal(renderEventTypes(readIdl()));
  });

  it('the generator fails the comparison when the IDL gains a field', () => {
    const idl = readIdl();
    const changed = structuredClone(idl);
    const record = changed.types.find((t) => t.name === 'PaymentRecord')!;
    if (record.type.kind !== 'struct') throw new Error('PaymentRecord is a struct');
    record.type.fields = [...(record.type.fields ?? []), { name: 'extra_field', type: 'u64' }];
    expect(renderEventTypes(changed)).to.not.equal(renderEventTypes(idl));
    expect(renderEventTypes(changed)).to.include('extra_field: DecimalString;');
  });

  it('every one of the 19 events decodes and parses back as its typed self', () => {
    expect(EVENT_NAMES).to.have.length(19);
    for (const name of EVENT_NAMES) {
      const e = makeEvent(name, {}, name);
      expect(parseEvent(serializeEvent(e))).to.deep.equal(e);
    }
  });

  it('refuses an entry whose data does not match the IDL, an unknown name, and a missing field', () => {
    const e = makeEvent('PaymentRecord', {}, 'bad');
    expect(() => parseEvent(JSON.stringify({ ...e, data: { ...e.data, amount: 5 } }))).to.throw(/amount/);
    expect(() => parseEvent(JSON.stringify({ ...e, data: { ...e.data, record_id: '1' } }))).to.throw(/record_id/);
    const { gateway: _g, ...noGateway } = e.data;
    expect(() => parseEvent(JSON.stringify({ ...e, data: noGateway }))).to.throw(/gateway/);
    expect(() => parseEvent(JSON.stringify({ ...e, name: 'NoSuchEvent' }))).to.throw(/unknown event/);
  });
});
