/** `tributary status`'s exact fee payer lines: a low active fee payer is a WARNING, an unknown balance is never zero. */
import { expect } from 'chai';
import { feePayerLines } from '../../commands/x402/exact/report.js';

describe('x402 exact fee payer status lines', () => {
  const base = { network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', address: 'Fee1111111111111111111111111111111111111111', active: true, retiresAt: null };

  it('says when there is none yet', () => {
    expect(feePayerLines([])).to.deep.equal(['x402 exact fee payer: none yet (made on first use)']);
  });

  it('warns about a low active fee payer, and shows an unknown balance as unknown', () => {
    const [low, unknown, retiring] = feePayerLines([
      { ...base, lamports: 1_000, low: true },
      { ...base, lamports: null, low: false },
      { ...base, active: false, retiresAt: new Date('2026-12-06T05:00:00Z'), lamports: 2_500_000_000, low: false },
    ]);
    expect(low).to.match(/^WARNING x402 exact fee payer .* active 0\.0000 SOL \(below X402_EXACT_FEE_PAYER_MIN_LAMPORTS/);
    expect(unknown).to.match(/^x402 exact fee payer .* active balance unknown$/);
    expect(retiring).to.match(/retiring 2026-12-06T05:00:00\.000Z 2\.5000 SOL$/);
  });
});
