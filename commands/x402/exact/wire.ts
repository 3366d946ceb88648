/**
 * The `exact` body of /v1/x402/verify and /settle, as @x402/core's HTTPFacilitatorClient
 * sends it: `{x402Version, paymentPayload, paymentRequirements}` with a standard
 * PaymentPayload (`payload.transaction`: the base64 partially-signed transaction) and
 * standard PaymentRequirements of scheme `exact` (`extra.feePayer` the service's fee payer,
 * `extra.memo` optional). The facilitator routes take it beside Tributary's own shapes.
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { base58Key, type JsonSchema } from '../../../src/kernel/http/schema.js';
import { exchangeBodySchemaOf } from '../standard/exchange-schema.js';

export interface ExactExchange { x402Version?: number; paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements }

/** A body whose requirements are of scheme `exact`. */
export function isExactExchange(body: unknown): body is ExactExchange {
  const r = (body as { paymentRequirements?: { scheme?: unknown } } | null)?.paymentRequirements;
  return typeof r === 'object' && r !== null && r.scheme === 'exact';
}

const exactRequirementSchema: JsonSchema = {
  type: 'object',
  required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds', 'extra'],
  properties: {
    scheme: { type: 'string', enum: ['exact'] },
    network: { type: 'string', pattern: '^solana:[1-9A-HJ-NP-Za-km-z]{1,44}$', description: 'CAIP-2; this service settles on its configured network only' },
    amount: { type: 'string', pattern: '^[0-9]{1,20}$', description: 'the exact amount, smallest token units' },
    asset: { ...base58Key, description: 'the token mint' },
    payTo: { ...base58Key, description: 'the merchant wallet; the transfer goes to its associated token account' },
    maxTimeoutSeconds: { type: 'integer', minimum: 1 },
    extra: {
      type: 'object', required: ['feePayer'],
      properties: {
        feePayer: { ...base58Key, description: 'the service\'s fee payer, as /v1/x402/supported lists it' },
        memo: { type: 'string', maxLength: 256, description: 'the memo the transaction must carry; the Socket.IO room of the payment' },
      },
    },
  },
};

export const exactExchangeBodySchema: JsonSchema = exchangeBodySchemaOf({
  description: 'x402 v2 `exact` on Solana (HTTPFacilitatorClient): the service verifies, co-signs as fee payer, sends and confirms',
  accepted: 'the requirement paid',
  payload: {
    type: 'object', required: ['transaction'],
    properties: { transaction: { type: 'string', maxLength: 8192, description: 'base64 partially-signed versioned transaction' } },
  },
  requirements: exactRequirementSchema,
});
