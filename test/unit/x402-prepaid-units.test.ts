/** x402://prepaid's pure parts: the requirement (credit and price), its terms against a OneTime policy, its approve. */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { RequirementError } from '../../commands/x402/requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { schemeOf } from '../../commands/x402/schemes/index.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import type { PaymentRequirement } from '../../commands/x402/requirements.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';

const key = () => Keypair.generate().publicKey.toBase58();
const base = { scheme: 'x402://prepaid' as const, network: 'solana:localnet', recipient: key(), gateway: key(), tokenMint: key() };
/** a policy about to be created, as the scheme checks it: its terms, then its schedule */
const checkNewPolicyTerms = (r: PaymentRequirement, t: PolicyType, now: number) => schemeOf(r).terms(r, t, 0) ?? schemeOf(r).newPolicy(r, t, now);
const oneTime = (amount: string, due = '0', expiry: string | null = null): PolicyType => ({ kind: 'OneTime', amount, due_date: due, expiry_date: expiry });

describe('x402://prepaid units', () => {
  it('prices a request at a hundredth of the credit by default, at least 1, and never above the credit', () => {
    const r = normalizeRequirement({ ...base, amount: 50_000 }, PROGRAM_ID);
    expect(r.scheme === 'x402://prepaid' && r.pricePerRequest).to.equal(500n);
    const tiny = normalizeRequirement({ ...base, amount: 7 }, PROGRAM_ID);
    expect(tiny.scheme === 'x402://prepaid' && tiny.pricePerRequest).to.equal(1n);
    expect(() => normalizeRequirement({ ...base, amount: 100, pricePerRequest: 101 }, PROGRAM_ID)).to.throw(RequirementError, /pricePerRequest exceeds amount/);
  });

  it('hashes the price into the id, and lists it in the accepts entry', () => {
    const a = normalizeRequirement({ ...base, amount: 50_000, pricePerRequest: 500 }, PROGRAM_ID);
    const b = normalizeRequirement({ ...base, amount: '50000' }, PROGRAM_ID);
    const c = normalizeRequirement({ ...base, amount: 50_000, pricePerRequest: 1000 }, PROGRAM_ID);
    expect(a.id).to.equal(b.id).and.not.equal(c.id);
    expect(acceptedRequirement(c, 'https://x.example/r')).to.include({ scheme: 'x402://prepaid', amount: 50_000, pricePerRequest: 1000 });
  });

  it('needs a OneTime policy of exactly the credit, due now and not expired', () => {
    const r = normalizeRequirement({ ...base, amount: 50_000 }, PROGRAM_ID);
    const now = 1_000_000;
    expect(checkNewPolicyTerms(r, oneTime('50000'), now)).to.equal(undefined);
    expect(checkNewPolicyTerms(r, oneTime('49999'), now)).to.match(/the credit \(the OneTime amount\) is 49999; the requirement asks 50000/);
    expect(checkNewPolicyTerms(r, oneTime('50000', String(now + 3600)), now)).to.match(/falls due at/);
    expect(checkNewPolicyTerms(r, oneTime('50000', '0', String(now - 1)), now)).to.match(/already expired/);
    const upto: PolicyType = { kind: 'UpTo', max_amount: '50000', valid_after: '0', deadline: String(now + 60) };
    expect(checkNewPolicyTerms(r, upto, now)).to.match(/needs a OneTime policy/);
  });

  it('asks the approve for the credit', () => {
    const r = normalizeRequirement({ ...base, amount: 50_000 }, PROGRAM_ID);
    expect(schemeOf(r).allowance(r).amount).to.equal(50_000n);
  });
});
