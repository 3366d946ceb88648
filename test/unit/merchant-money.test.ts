/**
 * The merchant model's arithmetic: fees per the program's formulas (PROGRAM.md §2) in
 * gross and net modes, MRR per frequency against hand-computed figures, and the UTC
 * buckets a time falls in.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { splitFromLog, splitPayment, bps } from '../../projections/merchant/fees.js';
import { monthlyMicro, microToDecimal } from '../../src/kernel/domain/mrr.js';
import { bucketStart, nextBucketStart } from '../../src/kernel/domain/buckets.js';
import type { Frequency, SubscriptionType } from '../../src/kernel/domain/policy-type.js';

const sub = (amount: string, payment_frequency: Frequency): SubscriptionType => ({
  kind: 'Subscription', amount, auto_renew: true, max_renewals: null, payment_frequency, next_payment_due: '0',
});
const mrr = (amount: string, f: Frequency) => microToDecimal(monthlyMicro(sub(amount, f)));

describe('merchant: fees follow the program', () => {
  it('gross mode: the fee comes out of the amount; protocol takes its share of the fee, floored', () => {
    // A = 1,000,003; fee 250 bps → floor(25,000.075) = 25,000; protocol 20% → 5,000
    const s = splitPayment(1_000_003n, { gatewayFeeBps: 250, netMode: false, customProtocolShareBps: null }, 2000);
    expect(s).to.deep.equal({ gross: 1_000_003n, gatewayFee: 20_000n, protocolFee: 5_000n, net: 975_003n });
  });

  it('net mode: the fee is added on top, the recipient gets the whole amount', () => {
    const s = splitPayment(1_000_003n, { gatewayFeeBps: 250, netMode: true, customProtocolShareBps: null }, 2000);
    expect(s).to.deep.equal({ gross: 1_025_003n, gatewayFee: 20_000n, protocolFee: 5_000n, net: 1_000_003n });
  });

  it('a custom protocol share replaces the config share; rounding stays with the gateway', () => {
    // fee = floor(999 · 150 / 10000) = 14; protocol = floor(14 · 3333 / 10000) = 4
    const s = splitPayment(999n, { gatewayFeeBps: 150, netMode: false, customProtocolShareBps: 3333 }, 2000);
    expect(s).to.deep.equal({ gross: 999n, gatewayFee: 10n, protocolFee: 4n, net: 985n });
  });

  it('gross = net + gateway fee + protocol fee, exact up to u64::MAX', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 18446744073709551615n }), fc.integer({ min: 0, max: 10000 }), fc.integer({ min: 0, max: 10000 }), fc.boolean(), (a, fee, share, net) => {
      const s = splitPayment(a, { gatewayFeeBps: fee, netMode: net, customProtocolShareBps: null }, share);
      expect(s.gross).to.equal(s.net + s.gatewayFee + s.protocolFee);
      expect(s.gatewayFee + s.protocolFee).to.equal(bps(a, fee));
      expect(net ? s.net : s.gross).to.equal(a);
    }));
  });
});

describe("merchant: fees from execute_payment's logged split", () => {
  const logged = (recipient: bigint, residual: bigint, scheduler: bigint, protocol: bigint) => ({
    recipient_amount: String(recipient), gateway_residual: String(residual), scheduler_cut: String(scheduler), protocol_cut: String(protocol),
  });

  it('gross mode: total fee = amount − recipient; the protocol cut is the chain\'s, whatever share made it', () => {
    // A = 1,000,003 at 250 bps: fee 25,000; a custom share of 0 gives the protocol nothing
    expect(splitFromLog(1_000_003n, logged(975_003n, 25_000n, 0n, 0n), 250))
      .to.deep.equal({ gross: 1_000_003n, gatewayFee: 25_000n, protocolFee: 0n, net: 975_003n, netMode: false });
  });

  it('net mode: the recipient gets the amount, the payer pays the formula\'s fee on top', () => {
    // gateway signer called: its scheduler cut (10% = 2,500) is merged and not in the log
    expect(splitFromLog(1_000_003n, logged(1_000_003n, 17_500n, 0n, 5_000n), 250))
      .to.deep.equal({ gross: 1_025_003n, gatewayFee: 20_000n, protocolFee: 5_000n, net: 1_000_003n, netMode: true });
  });

  it('agrees with the formula in both modes for any amount, fee and share', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 10_000 }), fc.boolean(),
      (amount, feeBps, share, netMode) => {
        const s = splitPayment(amount, { gatewayFeeBps: feeBps, netMode, customProtocolShareBps: share }, 2000);
        const fromLog = splitFromLog(amount, logged(s.net, s.gatewayFee, 0n, s.protocolFee), feeBps);
        expect({ gross: fromLog.gross, gatewayFee: fromLog.gatewayFee, protocolFee: fromLog.protocolFee, net: fromLog.net }).to.deep.equal(s);
      }));
  });
});

describe('merchant: MRR per frequency, hand-computed', () => {
  it('normalizes each frequency to a month of 1/12 year', () => {
    expect(mrr('1000', 'Daily')).to.equal('30416.666667'); // 1000 · 365 / 12
    expect(mrr('1200', 'Weekly')).to.equal('5200'); // 1200 · 52 / 12
    expect(mrr('999', 'Monthly')).to.equal('999');
    expect(mrr('1000', 'Quarterly')).to.equal('333.333333'); // 1000 / 3
    expect(mrr('1000', 'SemiAnnually')).to.equal('166.666667'); // 1000 / 6
    expect(mrr('1200', 'Annually')).to.equal('100');
    expect(mrr('5', { kind: 'Custom', value: '3600' })).to.equal('3650'); // 5 · 8760 / 12
    expect(mrr('7', { kind: 'Custom', value: '1000000' })).to.equal('18.396'); // 7 · 31.536 / 12
  });

  it('other policy types have no recurring rate', () => {
    expect(monthlyMicro({ kind: 'OneTime', amount: '5', due_date: '0', expiry_date: null })).to.equal(0n);
  });

  it('prints micro units as decimals of the base unit', () => {
    expect(microToDecimal(0n)).to.equal('0');
    expect(microToDecimal(3n)).to.equal('0.000003');
    expect(microToDecimal(-1_500_000n)).to.equal('-1.5');
  });
});

describe('merchant: UTC buckets', () => {
  const t = Date.UTC(2024, 1, 29, 13, 5, 7) / 1000; // Thursday 29 Feb 2024
  it('day, ISO week (Monday) and month starts', () => {
    expect(bucketStart('day', t)).to.equal(Date.UTC(2024, 1, 29) / 1000);
    expect(bucketStart('week', t)).to.equal(Date.UTC(2024, 1, 26) / 1000);
    expect(bucketStart('month', t)).to.equal(Date.UTC(2024, 1, 1) / 1000);
    expect(nextBucketStart('month', Date.UTC(2024, 11, 1) / 1000)).to.equal(Date.UTC(2025, 0, 1) / 1000);
  });

  it('a Monday starts its own week; times before 1970 floor downwards', () => {
    expect(bucketStart('week', Date.UTC(2024, 1, 26) / 1000)).to.equal(Date.UTC(2024, 1, 26) / 1000);
    expect(bucketStart('day', -1)).to.equal(-86_400);
    expect(bucketStart('week', -1)).to.equal(Date.UTC(1969, 11, 29) / 1000);
  });
});
