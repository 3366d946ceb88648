/** The standard form of a requirement: every scheme there and back keeps its id and terms, and passes @x402/core's schema. */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { PaymentRequiredV2Schema, PaymentRequirementsV2Schema } from '@x402/core/schemas';
import { type PaymentRequirementInput } from '../../commands/x402/requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { standardPaymentRequired, standardRequirement, STANDARD_TIMEOUT_SECONDS, wireRequirement } from '../../commands/x402/standard/requirements.js';
import { requirementFromWire } from '../../commands/x402/facilitator/wire.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';

const key = () => Keypair.generate().publicKey.toBase58();
const base = { network: 'solana:localnet', recipient: key(), gateway: key(), tokenMint: key(), memo: 'order-7' };
const RESOURCE = 'https://merchant.example/report';

const inputs: PaymentRequirementInput[] = [
  { ...base, scheme: 'deferred', amount: 1_000_000, paymentFrequency: 'Custom:3600', autoRenew: false, maxRenewals: 12, gracePeriodSeconds: 60 },
  { ...base, scheme: 'x402://payg', amount: 10_000, maxChunkAmount: 100_000, maxAmountPerPeriod: 1_000_000, periodLengthSeconds: 86_400, maxUnsettledAmount: 200_000 },
  { ...base, scheme: 'x402://upto', amount: '9007199254740991', maxTimeoutSeconds: 600 },
  { ...base, scheme: 'x402://prepaid', amount: 50_000, pricePerRequest: 500 },
];

describe('x402 standard requirements', () => {
  for (const input of inputs) {
    it(`${input.scheme}: there and back keeps the id and the terms; the standard schema accepts it`, () => {
      const r = normalizeRequirement(input, PROGRAM_ID, 259_200);
      const s = standardRequirement(acceptedRequirement(r, RESOURCE, 1_000_000));
      expect(PaymentRequirementsV2Schema.safeParse(s).success).to.equal(true);
      expect(s).to.deep.include({ scheme: r.scheme, network: r.network, amount: r.amount.toString(), asset: r.tokenMint, payTo: r.recipient });
      expect(s.extra).to.include({ id: r.id, gateway: r.gateway, programId: PROGRAM_ID, resource: RESOURCE, memo: 'order-7' });
      expect(s.maxTimeoutSeconds).to.equal(r.scheme === 'x402://upto' ? 600 : STANDARD_TIMEOUT_SECONDS);
      const back = requirementFromWire(wireRequirement(s, RESOURCE), PROGRAM_ID, 259_200);
      expect(back).to.deep.equal({ ...r, resource: RESOURCE });
    });
  }

  it('a 402 of several requirements keeps their order and passes @x402/core\'s PaymentRequired schema', () => {
    const accepts = inputs.map((i) => acceptedRequirement(normalizeRequirement(i, PROGRAM_ID), RESOURCE));
    const pr = standardPaymentRequired(accepts, RESOURCE, 'payment required', { description: 'a report' });
    expect(PaymentRequiredV2Schema.safeParse(pr).success).to.equal(true);
    expect(pr.accepts.map((a) => a.scheme)).to.deep.equal(inputs.map((i) => i.scheme));
    expect(pr).to.deep.include({ x402Version: 2, error: 'payment required', resource: { url: RESOURCE, description: 'a report', mimeType: 'application/json' } });
  });
});
