/** SPEC.md's envelopes. Some endpoints answer bare arrays or objects instead (per route). */
import type { JsonSchema } from './schema.js';
import type { ErrorEnvelope, SuccessEnvelope } from '../wire/answers/envelope.js';

// the envelopes' shapes are the wire module's, which the pages read as well
export type { ErrorEnvelope, SuccessEnvelope } from '../wire/answers/envelope.js';

export function envelope<T>(data: T, now = Date.now()): SuccessEnvelope<T> {
  return { success: true, data, timestamp: now };
}

export function errorEnvelope(message: string, code: string, now = Date.now()): ErrorEnvelope {
  return { error: message, code, success: false, timestamp: now };
}

export const errorEnvelopeSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', description: 'human-readable message' },
    code: { type: 'string', description: 'machine-readable kind: invalid_input, unauthorized, proof_required, payment_required, forbidden, not_found, conflict, payload_too_large, rate_limited, upstream_unavailable, internal' },
    success: { type: 'boolean', enum: [false] },
    timestamp: { type: 'integer', description: 'Unix epoch milliseconds' },
  },
};

export function envelopeSchema(data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['success', 'data', 'timestamp'],
    properties: { success: { type: 'boolean', enum: [true] }, data, timestamp: { type: 'integer' } },
  };
}
