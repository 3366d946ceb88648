/** The facilitator's pure parts: payment identifiers, wire requirements, the upto window. */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { AppError } from '../../src/kernel/http/errors.js';
import { fingerprintOf, paymentIdentifierOf } from '../../commands/x402/payment-identifier.js';
import type { PaymentPayload } from '../../commands/x402/payload.js';
import { UPTO_START_SKEW_SECONDS } from '../../commands/x402/requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { schemeOf } from '../../commands/x402/schemes/index.js';
import { requirementFromWire } from '../../commands/x402/facilitator/wire.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';

const key = () => Keypair.generate().publicKey.toBase58();
const base = { network: 'solana:localnet', recipient: key(), gateway: key(), tokenMint: key() };
const payload = (extensions?: Record<string, unknown>, proofAt = 1): PaymentPayload => ({
  x402Version: 2, scheme: 'deferred', network: 'solana:localnet', id: 'r1',
  payload: { serializedTransaction: 'AAAA', proof: { signedAt: proofAt, signature: 'x' } }, ...(extensions ? { extensions } : {}),
});

describe('x402 facilitator units', () => {
  it('reads a payment identifier of 16 to 128 safe characters, and refuses others with a 400', () => {
    expect(paymentIdentifierOf(payload())).to.equal(undefined);
    expect(paymentIdentifierOf(payload({ 'payment-identifier': { info: { id: 'pay_0123456789abcdef' } } }))).to.equal('pay_0123456789abcdef');
    for (const bad of [{ info: { id: 'short' } }, { info: { id: 'has space 0123456789' } }, { info: {} }, 'x', null, { info: { id: 'a'.repeat(129) } }]) {
      expect(() => paymentIdentifierOf(payload({ 'payment-identifier': bad })), JSON.stringify(bad)).to.throw(AppError);
    }
  });

  it('fingerprints the transaction and the requirement, not the proof (a retry re-signs it)', () => {
    expect(fingerprintOf(payload(undefined, 1), 'r1')).to.equal(fingerprintOf(payload(undefined, 2), 'r1'));
    expect(fingerprintOf(payload(), 'r1')).to.not.equal(fingerprintOf(payload(), 'r2'));
    const other = { ...payload(), payload: { serializedTransaction: 'BBBB' } };
    expect(fingerprintOf(other, 'r1')).to.not.equal(fingerprintOf(payload(), 'r1'));
  });

  it('gives an upto requirement a stable id over maximum and window, and offers a window in its accepts entry', () => {
    const a = normalizeRequirement({ ...base, scheme: 'x402://upto', amount: 500 }, PROGRAM_ID);
    const b = normalizeRequirement({ ...base, scheme: 'x402://upto', amount: '500', maxTimeoutSeconds: 3600 }, PROGRAM_ID);
    const c = normalizeRequirement({ ...base, scheme: 'x402://upto', amount: 500, maxTimeoutSeconds: 60 }, PROGRAM_ID);
    expect(a.id).to.equal(b.id).and.not.equal(c.id);
    expect(acceptedRequirement(c, 'https://x.example/r', 1000)).to.include({ maxAmount: 500, maxTimeoutSeconds: 60, validAfter: 1000 - UPTO_START_SKEW_SECONDS, deadline: 1060 });
  });

  it('accepts an UpTo window from about now to within maxTimeoutSeconds, and names what is wrong otherwise', () => {
    const t = (validAfter: number, deadline: number) => ({ kind: 'UpTo' as const, max_amount: '1', valid_after: String(validAfter), deadline: String(deadline) });
    const r = normalizeRequirement({ ...base, scheme: 'x402://upto', amount: 1, maxTimeoutSeconds: 600 }, PROGRAM_ID);
    const windowProblem = (validAfter: number, deadline: number) => schemeOf(r).newPolicy(r, t(validAfter, deadline), 1000);
    expect(windowProblem(1000, 1600)).to.equal(undefined);
    expect(windowProblem(0, 1600)).to.equal(undefined);
    expect(windowProblem(2000, 2100)).to.match(/starts at 2000, not now/);
    expect(windowProblem(0, 999)).to.match(/has passed/);
    expect(windowProblem(1000, 5000)).to.match(/more than maxTimeoutSeconds/);
  });

  it('normalizes wire requirements as the middleware does, and answers 400 for bad terms or another program', () => {
    const wire = { ...base, scheme: 'deferred' as const, amount: '1000000', id: 'ignored' };
    expect(requirementFromWire(wire, PROGRAM_ID).id).to.equal(normalizeRequirement({ ...base, scheme: 'deferred', amount: 1_000_000 }, PROGRAM_ID).id);
    expect(() => requirementFromWire({ ...wire, amount: '0' }, PROGRAM_ID)).to.throw(AppError, /amount/);
    expect(() => requirementFromWire({ ...wire, extra: { programId: key() } }, PROGRAM_ID)).to.throw(AppError, /programId/);
  });
});
