/**
 * The JSON schema of the normalized policy (policy.ts): one schema, referenced by every
 * route that answers policies, so the OpenAPI document describes the shape once.
 */
import type { JsonSchema } from '../http/schema.js';
import { POLICY_STATUSES, POLICY_VARIANTS } from './policy-type.js';

const key = { type: 'string', description: 'base58 public key' };
const u64 = { type: 'string', pattern: '^[0-9]+$', description: 'u64 as a decimal string' };
const i64 = { type: 'string', pattern: '^-?[0-9]+$', description: 'i64 (unix seconds) as a decimal string' };
const seconds = (description: string): JsonSchema => ({ type: 'integer', nullable: true, description: `${description}, unix seconds` });

const params = (title: string, properties: Record<string, JsonSchema>): JsonSchema => ({
  title, type: 'object', required: Object.keys(properties), properties,
});

/** The five variants' parameters (the on-chain PolicyType fields, camelCase). */
export const policyParametersSchema: JsonSchema = {
  description: 'the variant\'s parameters; which shape applies is given by `variant`',
  oneOf: [
    params('Subscription', {
      amount: u64, autoRenew: { type: 'boolean' }, maxRenewals: { type: 'integer', nullable: true },
      paymentFrequency: { type: 'string', enum: ['Daily', 'Weekly', 'Monthly', 'Quarterly', 'SemiAnnually', 'Annually', 'Custom'] },
      frequencySeconds: { ...u64, description: 'one period in seconds (Monthly = 30 days, as the program counts)' },
      nextPaymentDue: i64,
    }),
    params('Milestone', {
      milestoneAmounts: { type: 'array', items: u64, minItems: 4, maxItems: 4 },
      milestoneTimestamps: { type: 'array', items: i64, minItems: 4, maxItems: 4 },
      currentMilestone: { type: 'integer' }, releaseCondition: { type: 'integer' }, totalMilestones: { type: 'integer' },
      escrowAmount: u64,
    }),
    params('PayAsYouGo', {
      maxAmountPerPeriod: u64, maxChunkAmount: u64, periodLengthSeconds: u64,
      currentPeriodStart: i64, currentPeriodTotal: u64, expiryDate: { ...i64, nullable: true },
    }),
    params('OneTime', { amount: u64, dueDate: i64, expiryDate: { ...i64, nullable: true } }),
    params('UpTo', { maxAmount: u64, validAfter: i64, deadline: i64 }),
  ],
};

const composableSchema: JsonSchema = {
  type: 'object',
  nullable: true,
  description: 'composable policies only (null on payment policies): the forward of funds through a pinned CPI',
  required: ['totalInput', 'totalOutput', 'targetProgram', 'inputMint', 'outputMint', 'forwardConfig', 'preValidation', 'postValidation'],
  properties: {
    totalInput: u64,
    totalOutput: u64,
    targetProgram: { ...key, nullable: true },
    inputMint: { ...key, nullable: true },
    outputMint: { ...key, nullable: true },
    forwardConfig: { type: 'object', description: 'ForwardConfig of the IDL, camelCase' },
    preValidation: { description: '"Disabled" or {kind, ...} (ValidationSpec of the IDL)' },
    postValidation: { description: '"Disabled" or {kind, ...} (ValidationSpec of the IDL)' },
  },
};

export const normalizedPolicySchema: JsonSchema = {
  title: 'NormalizedPolicy',
  type: 'object',
  description: 'A payment or composable policy of any variant, in one shape. Amounts are decimal strings; times are unix seconds.',
  required: [
    'address', 'kind', 'policyId', 'variant', 'parameters', 'gateway', 'recipient', 'owner', 'userPayment', 'tokenMint',
    'trackingId', 'memoHex', 'status', 'totalPaid', 'paymentCount', 'lastPaymentAt', 'lastPaymentSignature',
    'nextPaymentDue', 'createdAt', 'updatedAt', 'composable', 'source',
  ],
  properties: {
    address: { ...key, description: 'the policy account (a PDA of the program)' },
    kind: { type: 'string', enum: ['payment', 'composable'] },
    policyId: { type: 'integer', description: 'u32 id within its user payment (a seed of the address)' },
    variant: { type: 'string', enum: [...POLICY_VARIANTS] },
    parameters: policyParametersSchema,
    gateway: { ...key, description: 'payment gateway account' },
    recipient: { ...key, description: 'recipient wallet' },
    owner: { ...key, nullable: true, description: 'user wallet owning the user payment; null when not yet indexed' },
    userPayment: { ...key, description: 'user payment account' },
    tokenMint: { ...key, nullable: true, description: 'mint of the user payment; null when not yet indexed' },
    trackingId: { type: 'string', description: 'the memo as UTF-8 without its zero padding (64 bytes; 32 on composable policies)' },
    memoHex: { type: 'string', description: 'the raw memo bytes, hex' },
    status: { type: 'string', enum: [...POLICY_STATUSES] },
    totalPaid: { ...u64, description: 'sum of payments (total input on composable policies), base units' },
    paymentCount: { type: 'integer' },
    lastPaymentAt: seconds('time of the last payment (null: none)'),
    lastPaymentSignature: { type: 'string', nullable: true, description: 'transaction of the last payment' },
    nextPaymentDue: seconds('when the next payment falls due: Subscription, Milestone and OneTime while not Completed; else null'),
    createdAt: seconds('creation'),
    updatedAt: seconds('last change'),
    composable: composableSchema,
    source: { type: 'string', enum: ['chain', 'read-model'], description: 'where this answer was read' },
    chainUnavailable: { type: 'boolean', description: 'present when the chain was asked but did not answer, so the read model did' },
  },
};
