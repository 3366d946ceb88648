/** Request and response schemas of the policy routes, each declared once. */
import { base58Key, limitSchema, offsetSchema, type JsonSchema } from '../../src/kernel/http/schema.js';
import { envelopeSchema } from '../../src/kernel/http/envelope.js';
import { normalizedPolicySchema } from '../../src/kernel/domain/policy-schema.js';
import type { ListEndpoint } from './filters.js';

export function filterQuerySchema(endpoint: ListEndpoint, defaultMint: string, maxLimit: number): JsonSchema {
  const memoBytes = endpoint === 'composable-policies' ? 32 : 64;
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      gatewayPublicKey: { ...base58Key, description: 'payment gateway account' },
      recipient: { ...base58Key, description: 'recipient wallet' },
      tokenMint: { ...base58Key, description: `mint of the user payment; default ${defaultMint} (the default stablecoin), which counts toward no filter limit` },
      trackingId: { type: 'string', minLength: 1, maxLength: memoBytes, description: `tracking id assigned at checkout, matched through its ${memoBytes}-byte memo encoding` },
      userPublicKey: {
        ...base58Key,
        description: endpoint === 'subscriptions' ? 'the user\'s owner wallet' : 'the user payment account',
      },
      walletPublicKey: { ...base58Key, description: 'the user\'s wallet; requires tokenMint (the user payment is PDA("user_payment", wallet, tokenMint))' },
      limit: { ...limitSchema(100, maxLimit), description: 'page size (not a filter)' },
      offset: { ...offsetSchema, description: 'page offset (not a filter)' },
    },
  };
}

export const addressParams: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['address'],
  properties: { address: { ...base58Key, description: 'policy account address' } },
};

export const pageQuery = (maxLimit: number): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties: { limit: limitSchema(100, maxLimit), offset: offsetSchema },
});

export const policyListResponse = envelopeSchema({ type: 'array', items: normalizedPolicySchema });
export const policyResponse = envelopeSchema(normalizedPolicySchema);
