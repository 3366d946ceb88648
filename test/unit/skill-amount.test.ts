/**
 * The skill document's amount conversion, proven against exact rational arithmetic:
 * an amount string a = p / 10^k (p, k read digit by digit) times 10^d is an integer
 * exactly when 10^k divides p·10^d, and then it is the base-unit amount.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { AmountError, formatBaseUnits, toBaseUnits } from '../../queries/skill/amount.js';

/** the oracle: exact rational value of a decimal string, scaled by 10^decimals */
function oracle(amount: string, decimals: number): bigint | 'inexact' {
  const [whole = '0', fraction = ''] = amount.split('.');
  const p = BigInt(whole + fraction);
  const num = p * 10n ** BigInt(decimals);
  const den = 10n ** BigInt(fraction.length);
  return num % den === 0n ? num / den : 'inexact';
}

const digits = (min: number, max: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((a) => a.join(''));
const amountArb = fc.tuple(digits(1, 25), fc.option(digits(1, 30), { nil: undefined }))
  .map(([w, f]) => (f === undefined ? w : `${w}.${f}`));

describe('skill amount conversion', () => {
  it('turns "1.5" with 6 decimals into 1500000', () => {
    expect(toBaseUnits('1.5', 6).toString()).to.equal('1500000');
  });

  it('keeps integers and whole numbers exact', () => {
    expect(toBaseUnits('12', 0)).to.equal(12n);
    expect(toBaseUnits('12', 9)).to.equal(12_000_000_000n);
    expect(toBaseUnits('0.000001', 6)).to.equal(1n);
    expect(toBaseUnits('18446744073709.551615', 6)).to.equal(18_446_744_073_709_551_615n);
  });

  it('refuses more significant decimal places than the mint has, accepts trailing zeros', () => {
    expect(() => toBaseUnits('1.0000001', 6)).to.throw(AmountError, /more decimal places/);
    expect(() => toBaseUnits('0.5', 0)).to.throw(AmountError);
    expect(toBaseUnits('1.500000000', 6)).to.equal(1_500_000n);
  });

  it('refuses what is not a plain decimal number', () => {
    for (const bad of ['', '1.', '.5', '-1', '1e6', '1,5', ' 1', '0x10', 'NaN', '1.2.3']) {
      expect(() => toBaseUnits(bad, 6), bad).to.throw(AmountError);
    }
  });

  it('agrees with exact decimal arithmetic on every amount and precision (property)', () => {
    fc.assert(fc.property(amountArb, fc.integer({ min: 0, max: 30 }), (amount, decimals) => {
      const expected = oracle(amount, decimals);
      if (expected === 'inexact') {
        expect(() => toBaseUnits(amount, decimals)).to.throw(AmountError);
      } else {
        expect(toBaseUnits(amount, decimals)).to.equal(expected);
      }
    }), { numRuns: 2000 });
  });

  it('round-trips base units through their display form (property)', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 0, max: 19 }), (units, decimals) => {
      expect(toBaseUnits(formatBaseUnits(units, decimals), decimals)).to.equal(units);
    }), { numRuns: 2000 });
  });
});
