/** The events API's input parsing: times, tracking-id memo encodings, event names. */
import { expect } from 'chai';
import { AppError } from '../../src/kernel/http/errors.js';
import { eventNameParam, parseTime, parseTimeRange, trackingIdMemos, checkSlotRange } from '../../queries/events/params.js';

const rejects = (f: () => unknown, mentions: string) => {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(AppError);
    expect((e as AppError).status).to.equal(400);
    expect((e as AppError).message).to.include(mentions);
    return;
  }
  expect.fail('expected an invalid-input error');
};

describe('events params', () => {
  it('reads unix seconds and ISO 8601 (offset-less as UTC) as the same instant', () => {
    const t = 1_714_564_800; // 2024-05-01T12:00:00Z
    expect(parseTime(String(t), 'startTime')).to.equal(t);
    expect(parseTime('2024-05-01T12:00:00Z', 'startTime')).to.equal(t);
    expect(parseTime('2024-05-01T12:00:00', 'startTime')).to.equal(t);
    expect(parseTime('2024-05-01 12:00:00Z', 'startTime')).to.equal(t);
    expect(parseTime('2024-05-01T14:00:00+02:00', 'startTime')).to.equal(t);
    expect(parseTime('2024-05-01T14:00:00+0200', 'startTime')).to.equal(t);
    expect(parseTime('2024-05-01T12:00Z', 'startTime')).to.equal(t);
    expect(parseTime('2024-05-01', 'startTime')).to.equal(t - 12 * 3600);
    expect(parseTime('2024-05-01T12:00:00.250Z', 'startTime')).to.equal(t + 0.25);
  });

  it('rejects what is neither, naming the parameter', () => {
    for (const bad of ['', 'now', '-1', '1.5', '2024-5-1', '2024-02-30', '2023-02-29T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T00:60:00Z', '2024-01-01T00:00:00+5', '1714564800000']) {
      rejects(() => parseTime(bad, 'endTime'), 'endTime');
    }
  });

  it('turns a time range into inclusive whole seconds and refuses a reversed one', () => {
    expect(parseTimeRange('2024-05-01T12:00:00.250Z', '2024-05-01T12:00:10.750Z')).to.deep.equal({ from: 1_714_564_801, to: 1_714_564_810 });
    expect(parseTimeRange(undefined, '100')).to.deep.equal({ to: 100 });
    expect(parseTimeRange(undefined, undefined)).to.deep.equal({});
    rejects(() => parseTimeRange('200', '100'), 'startTime');
    rejects(() => checkSlotRange(5, 4), 'minSlot');
    checkSlotRange(4, 4);
  });

  it('encodes a tracking id as its 64-byte memo, and as the 32-byte one when it fits', () => {
    const [long, short] = trackingIdMemos('order-42');
    expect(long!.length).to.equal(64);
    expect(short!.length).to.equal(32);
    expect(long!.subarray(0, 8).toString()).to.equal('order-42');
    expect(long!.subarray(8).every((b) => b === 0)).to.equal(true);
    expect(trackingIdMemos('x'.repeat(40))).to.have.length(1);
    expect(trackingIdMemos('é'.repeat(32))[0]!.length).to.equal(64);
    rejects(() => trackingIdMemos('é'.repeat(33)), 'trackingId');
    rejects(() => trackingIdMemos(''), 'trackingId');
  });

  it('accepts canonical names and SPEC aliases, nothing else', () => {
    expect(eventNameParam('PaymentRecord')).to.equal('PaymentRecord');
    expect(eventNameParam('GatewayCreated')).to.equal('PaymentGatewayCreated');
    expect(eventNameParam('ReferralRewardDistributed')).to.equal('ReferralRewardDistributedRecord');
    rejects(() => eventNameParam('paymentrecord'), 'paymentrecord');
  });
});
