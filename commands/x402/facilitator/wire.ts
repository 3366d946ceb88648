/**
 * Payment requirements as a facilitator request carries them: an `accepts` entry of a 402
 * answer (the fields of requirements.ts, amounts as integers or decimal strings). They are
 * normalized exactly as the middleware normalizes its configuration, so the id a merchant
 * in any language sends is the id the middleware would have computed.
 */
import { invalid } from '../../../src/kernel/http/errors.js';
import { base58Key, type JsonSchema } from '../../../src/kernel/http/schema.js';
import { RequirementError, SCHEMES, type PaymentRequirement, type PaymentRequirementInput } from '../requirements.js';
import { normalizeRequirement } from '../requirement-forms.js';

const amount: JsonSchema = { anyOf: [{ type: 'string', pattern: '^[0-9]{1,20}$' }, { type: 'integer', minimum: 0 }] };

export const wireRequirementSchema: JsonSchema = {
  type: 'object',
  required: ['scheme', 'network', 'amount', 'recipient', 'gateway', 'tokenMint'],
  properties: {
    scheme: { type: 'string', enum: [...SCHEMES] },
    network: { type: 'string', maxLength: 64 },
    amount,
    recipient: base58Key, gateway: base58Key, tokenMint: base58Key,
    currency: { type: 'string', maxLength: 64 },
    resource: { type: 'string', maxLength: 2048 },
    description: { type: 'string', maxLength: 1000 },
    memo: { type: 'string', maxLength: 64 },
    id: { type: 'string', maxLength: 64, description: 'ignored: recomputed from the terms' },
    paymentFrequency: { type: 'string', maxLength: 32 },
    autoRenew: { type: 'boolean' },
    maxRenewals: { type: 'integer', nullable: true },
    gracePeriodSeconds: { type: 'integer', minimum: 0, description: 'deferred: seconds past next_payment_due the subscription is honoured; default a tenth of the period, at most SUBSCRIPTION_GRACE_SECONDS' },
    maxAmountPerPeriod: amount,
    periodLengthSeconds: amount,
    maxChunkAmount: amount,
    maxUnsettledAmount: { ...amount, description: 'x402://payg: the most a payer may use beyond what is charged on chain; default maxChunkAmount' },
    minExpirySeconds: { ...amount, description: 'x402://payg: a policy\'s expiry_date must lie at least this far after its creation; default periodLengthSeconds + 3600' },
    maxAmount: amount,
    validAfter: amount,
    deadline: amount,
    pricePerRequest: { ...amount, description: 'x402://prepaid: what one request costs, drawn from the credit (amount); default amount / 100' },
    extra: { type: 'object', properties: { programId: base58Key, x402Version: { type: 'integer' } } },
  },
};

type Wire = PaymentRequirementInput & { id?: string; extra?: { programId?: string } };

/** The normalized requirement; a 400 naming the problem when the terms are not valid. */
export function requirementFromWire(w: Wire, programId: string, graceCapSeconds?: number): PaymentRequirement {
  if (w.extra?.programId !== undefined && w.extra.programId !== programId) {
    throw invalid(`paymentRequirements.extra.programId is ${w.extra.programId}; this service settles for program ${programId}`);
  }
  const { id: _id, extra: _extra, ...input } = w;
  try {
    return normalizeRequirement(input, programId, graceCapSeconds);
  } catch (err) {
    if (err instanceof RequirementError) throw invalid(err.message);
    throw err;
  }
}
