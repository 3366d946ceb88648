/**
 * The test helper's events: encoded by Anchor's BorshCoder and decoded by our codec into
 * exactly the chosen values; and the API's per-kind schemas describe what the codec gives.
 */
import { expect } from 'chai';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { encodeEventPayload, eventFields, I64_MIN, makeEvent, makeEvents, trackingIdMemo, U64_MAX, uniqueEvents } from '../support/anchor-events.js';
import { decodeEventPayload } from '../../src/kernel/events/codec.js';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import { eventDataSchema, typedEventSchema } from '../../queries/events/event-schema.js';
import { toApiEvent } from '../../queries/events/events-query.js';
import { dataOf } from '../support/anchor-events.js';

describe('anchor test events', () => {
  it('round-trips chosen values of every field type through Anchor and the codec', () => {
    const policy = {
      kind: 'PayAsYouGo', max_amount_per_period: U64_MAX.toString(), max_chunk_amount: '1', period_length_seconds: '86400',
      current_period_start: I64_MIN.toString(), current_period_total: '0', expiry_date: null,
    };
    const e = makeEvent('PaymentPolicyCreated', { policy_type: policy, memo: 'x'.repeat(64), policy_id: 4294967295 }, 5);
    expect(e.data['policy_type']).to.deep.equal(policy);
    expect(e.data['memo']).to.equal('x'.repeat(64));
    expect(e.data['memo_hex']).to.equal('78'.repeat(64));
    expect(e.data['policy_id']).to.equal(4294967295);

    const some = makeEvent('PaymentPolicyCreated', { policy_type: { ...policy, expiry_date: '-1' }, memo: trackingIdMemo('t') }, 5);
    expect((some.data['policy_type'] as Record<string, unknown>)['expiry_date']).to.equal('-1');
    expect(some.data['memo']).to.equal('t');
    expect(some.data['memo_hex']).to.equal(`74${'00'.repeat(63)}`);

    const sub = makeEvent('ComposablePolicyStatusChanged', { old_status: 'Paused', new_status: 'Completed' });
    expect(sub.data).to.include({ old_status: 'Paused', new_status: 'Completed' });
    const custom = { kind: 'Subscription', amount: '5', auto_renew: false, max_renewals: 3, payment_frequency: { kind: 'Custom', value: '3600' }, next_payment_due: '-5' };
    expect(makeEvent('PaymentPolicyCreated', { policy_type: custom }).data['policy_type']).to.deep.equal(custom);
  });

  it('is the same payload Anchor produces, whatever the seed, and deterministic per seed', () => {
    const fields = eventFields('PaymentRecord', { amount: '7' }, 3);
    const decoded = decodeEventPayload(encodeEventPayload('PaymentRecord', fields));
    expect(decoded?.name).to.equal('PaymentRecord');
    expect(dataOf(decoded)['amount']).to.equal('7');
    expect(makeEvent('PaymentRecord', {}, 9)).to.deep.equal(makeEvent('PaymentRecord', {}, 9));
    expect(makeEvent('PaymentRecord', {}, 9).id).to.not.equal(makeEvent('PaymentRecord', {}, 10).id);
  });

  it('builds streams with every kind, increasing slots, 88-character signatures and exact duplicates', () => {
    const list = makeEvents(400, { seed: 2, duplicates: 0.2 });
    const unique = uniqueEvents(list);
    expect(list).to.have.length(480);
    expect(unique).to.have.length(400);
    expect(new Set(unique.map((e) => e.name)).size).to.equal(19);
    expect(unique.every((e) => e.signature.length === 88)).to.equal(true);
    for (let i = 1; i < unique.length; i += 1) expect(unique[i]!.slot).to.be.at.least(unique[i - 1]!.slot);
  });

  it('matches the typed event schemas of the OpenAPI document, field for field', () => {
    const ajv = new Ajv({ strict: false });
    (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
    const events = makeEvents(19 * 20, { seed: 4, nullBlockTime: 0.1 });
    for (const name of EVENT_NAMES) {
      const validate = ajv.compile(typedEventSchema(name));
      const schema = eventDataSchema(name);
      const keys = Object.keys(schema['properties'] ?? {}).sort();
      // what the program's event carries; fields the indexer adds from beside it (fee_split) are optional
      const required = ((schema['required'] ?? []) as string[]).slice().sort();
      for (const e of events.filter((x) => x.name === name)) {
        const api = toApiEvent({
          id: e.id, name: e.name, signature: e.signature, slot: String(e.slot), block_time: e.blockTime === null ? null : String(e.blockTime),
          ix_path: e.ixPath, event_index: e.index, data: e.data,
        });
        expect(validate(api), `${name}: ${JSON.stringify(validate.errors)}`).to.equal(true);
        expect(keys, name).to.include.members(Object.keys(e.data));
        expect(Object.keys(e.data).sort(), name).to.include.members(required);
      }
    }
  });
});
