/**
 * The body @x402/core's HTTPFacilitatorClient posts to /verify and /settle:
 * `{x402Version, paymentPayload, paymentRequirements}`. One shape for every scheme; what a
 * scheme's payload and requirements hold is its own (facilitator/standard.ts for
 * Tributary's schemes, exact/wire.ts for `exact`).
 */
import type { JsonSchema } from '../../../src/kernel/http/schema.js';

export interface ExchangeParts {
  description: string;
  /** what `paymentPayload.accepted` is, in words */
  accepted: string;
  payload: JsonSchema;
  requirements: JsonSchema;
  /** whether the payload may carry `extensions` */
  extensions?: boolean;
}

export function exchangeBodySchemaOf(p: ExchangeParts): JsonSchema {
  return {
    type: 'object',
    required: ['paymentPayload', 'paymentRequirements'],
    description: p.description,
    properties: {
      x402Version: { type: 'integer', enum: [2] },
      paymentPayload: {
        type: 'object', required: ['x402Version', 'accepted', 'payload'],
        properties: {
          x402Version: { type: 'integer', enum: [2] },
          resource: { type: 'object', required: ['url'], properties: { url: { type: 'string', maxLength: 2048 } } },
          accepted: { type: 'object', description: p.accepted },
          payload: p.payload,
          ...(p.extensions ? { extensions: { type: 'object' } } : {}),
        },
      },
      paymentRequirements: p.requirements,
    },
  };
}
