/**
 * What a payer's balance or delegation funds at a net-mode gateway, where the program
 * draws amount + floor(amount × fee_bps / 10000): exactly the largest such amount. The
 * estimate gross × 10000 / (10000 + bps) alone fell a unit short when the fee's floor
 * rounded, refusing a maximum the payer had approved with its fee.
 */
import { expect } from 'chai';
import { fundedBeforeFees } from '../../commands/x402/payability.js';

const drawn = (amount: bigint, bps: bigint): bigint => amount + (amount * bps) / 10_000n;

describe('fundedBeforeFees', () => {
  it('funds the maximum whose approve carries its fee', () => {
    expect(fundedBeforeFees(drawn(500_001n, 100n), 100n)).to.equal(500_001n);
    expect(fundedBeforeFees(1_000n, 0n)).to.equal(1_000n);
  });

  it('is the largest amount the program would draw within gross, for every gross and fee tried', () => {
    for (const bps of [0n, 1n, 99n, 100n, 250n, 3_333n, 10_000n]) {
      for (let gross = 0n; gross < 2_000n; gross += 1n) {
        const a = fundedBeforeFees(gross, bps);
        expect(drawn(a, bps) <= gross, `${gross} at ${bps}`).to.equal(true);
        expect(drawn(a + 1n, bps) > gross, `${gross} at ${bps}`).to.equal(true);
      }
    }
  });
});
