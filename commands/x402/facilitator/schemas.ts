/** Request and answer schemas of the facilitator routes (OpenAPI and validation). */
import { base58Key, type JsonSchema } from '../../../src/kernel/http/schema.js';
import { SCHEMES } from '../requirements.js';
import { wireRequirementSchema } from './wire.js';

export const paymentPayloadSchema: JsonSchema = {
  type: 'object',
  description: 'the Payment header\'s JSON (decoded from Base64): x402Version 2, scheme, network, id (accepts[].id), payload.serializedTransaction; optional extensions["payment-identifier"].info.id',
  required: ['x402Version', 'scheme', 'network', 'id', 'payload'],
  properties: {
    x402Version: { type: 'integer' },
    scheme: { type: 'string' },
    network: { type: 'string' },
    id: { type: 'string' },
    payload: { type: 'object', properties: { serializedTransaction: { type: 'string', maxLength: 4096 } } },
    extensions: { type: 'object' },
  },
};

export const exchangeBodySchema: JsonSchema = {
  type: 'object',
  required: ['paymentPayload', 'paymentRequirements'],
  properties: { x402Version: { type: 'integer', enum: [2] }, paymentPayload: paymentPayloadSchema, paymentRequirements: wireRequirementSchema },
};

export const verifyAnswerSchema: JsonSchema = {
  type: 'object',
  required: ['isValid'],
  properties: { isValid: { type: 'boolean' }, invalidReason: { type: 'string' }, invalidMessage: { type: 'string' }, payer: base58Key },
};

export const settleAnswerSchema: JsonSchema = {
  type: 'object',
  required: ['success', 'network'],
  properties: {
    success: { type: 'boolean' },
    errorReason: { type: 'string' },
    transaction: { type: 'string', description: 'signature of the transaction sent; absent when an existing policy served' },
    network: { type: 'string' },
    payer: base58Key,
    policy: { ...base58Key, description: 'the payment policy that authorizes the payer' },
    jwt: { type: 'string', description: 'the JWT the middleware would have answered; present it as a bearer token. aud = ["<JWT_AUDIENCE>:gateway:<gateway>:x402", "<JWT_AUDIENCE>:gateway:<gateway>:x402:<requirement id>"]: verify it with one of these, never the shared audience' },
    expiresAt: { type: 'integer', description: 'unix seconds' },
    paymentResponse: { type: 'string', description: 'the Payment-Response header value the middleware would have sent' },
  },
};

export const usageBodySchema: JsonSchema = {
  type: 'object',
  required: ['jwt', 'paymentRequirements'],
  properties: {
    jwt: { type: 'string', maxLength: 4096, description: 'the bearer JWT the client presented' },
    paymentRequirements: {
      anyOf: [wireRequirementSchema, { type: 'array', minItems: 1, maxItems: 16, items: wireRequirementSchema }],
      description: 'the requirements of the resource (one, or all it accepts)',
    },
    amount: {
      anyOf: [{ type: 'string', pattern: '^[0-9]{1,20}$' }, { type: 'integer', minimum: 0 }],
      description: 'what this request costs in smallest units; x402://payg: default the requirement\'s amount; x402://upto: required, the actual charge; '
        + 'x402://prepaid: default the requirement\'s pricePerRequest, drawn from the credit',
    },
    transaction: { type: 'string', maxLength: 2048, description: 'x402://upto: base64 of the merchant-signed execute_payment that settles `amount`' },
  },
};

export const usageAnswerSchema: JsonSchema = {
  type: 'object',
  required: ['admitted'],
  properties: {
    admitted: { type: 'boolean' },
    reason: { type: 'string' },
    payer: base58Key, policy: base58Key, scheme: { type: 'string' }, network: { type: 'string' }, requirementId: { type: 'string' },
    metered: { type: 'object', description: 'x402://payg: the chunk and the period\'s total and limit' },
    prepaid: {
      type: 'object', description: 'x402://prepaid: what this request drew from the credit',
      properties: { chunk: { type: 'string' }, used: { type: 'string' }, credit: { type: 'string' }, remaining: { type: 'string' }, requestId: { type: 'string' } },
    },
    settled: { type: 'object', properties: { amount: { type: 'string' }, transaction: { type: 'string' } } },
  },
};

export const supportedSchema: JsonSchema = {
  type: 'object',
  required: ['kinds', 'extensions', 'signers'],
  properties: {
    kinds: {
      type: 'array',
      items: {
        type: 'object', required: ['x402Version', 'scheme', 'network'],
        properties: { x402Version: { type: 'integer' }, scheme: { type: 'string', enum: [...SCHEMES, 'exact'] }, network: { type: 'string' }, extra: { type: 'object', description: 'exact: {feePayer}, the service\'s fee payer' } },
      },
    },
    extensions: { type: 'array', items: { type: 'string' } },
    signers: { type: 'object', description: 'addresses the facilitator signs with, by CAIP-2 family: the exact fee payers under `solana:*` (Tributary\'s own schemes: the payer signs and pays the fees)' },
  },
};

export const resourceBodySchema: JsonSchema = {
  type: 'object',
  required: ['resource', 'accepts'],
  additionalProperties: false,
  properties: {
    resource: {
      type: 'string', maxLength: 2048,
      description: 'https URL (http only on a loopback host where X402_DISCOVERY_ALLOW_HTTP_LOOPBACK is set); no credentials, no fragment; stored and answered normalized',
    },
    type: { type: 'string', enum: ['http'], default: 'http' },
    description: { type: 'string', maxLength: 2000 },
    discoverable: { type: 'boolean', default: true },
    input: { type: 'object', description: 'how to call it: method, query or body schema, headers' },
    output: { type: 'object', description: 'what it answers: media type, schema, an example' },
    accepts: { type: 'array', minItems: 1, maxItems: 16, items: wireRequirementSchema },
  },
};

export const discoveryItemSchema: JsonSchema = {
  type: 'object',
  required: ['resource', 'type', 'x402Version', 'accepts', 'lastUpdated', 'metadata'],
  properties: {
    resource: { type: 'string' }, type: { type: 'string' }, x402Version: { type: 'integer' },
    accepts: { type: 'array', items: { type: 'object' } }, lastUpdated: { type: 'string', format: 'date-time' },
    metadata: { type: 'object', properties: { description: { type: 'string' }, input: { type: 'object' }, output: { type: 'object' } } },
  },
};

const proofInstructionsSchema: JsonSchema = {
  type: 'object',
  required: ['origin', 'url', 'token', 'instructions'],
  properties: {
    origin: { type: 'string' },
    url: { type: 'string', description: 'where to publish the token: <origin>/.well-known/tributary-x402.txt, one token per line' },
    token: { type: 'string', description: 'the token issued to this gateway for this origin' },
    instructions: { type: 'string' },
  },
};

export const registeredResourceSchema: JsonSchema = {
  ...discoveryItemSchema,
  required: [...(discoveryItemSchema['required'] as string[]), 'verified', 'listed'],
  properties: {
    ...(discoveryItemSchema['properties'] as Record<string, JsonSchema>),
    verified: { type: 'boolean', description: 'the gateway proved control of the resource\'s origin' },
    listed: { type: 'boolean', description: 'discovery lists this registration (verified, and discoverable unless it says otherwise)' },
    proof: { ...proofInstructionsSchema, description: 'when not verified: the token to publish before POST /v1/x402/resources/verify' },
  },
};

export const originVerifyBodySchema: JsonSchema = {
  type: 'object',
  required: ['origin'],
  additionalProperties: false,
  properties: { origin: { type: 'string', maxLength: 2048, description: 'the origin (or any URL on it) of resources the gateway registered' } },
};

export const originVerifiedSchema: JsonSchema = {
  type: 'object',
  required: ['origin', 'verified', 'verifiedAt', 'listed'],
  properties: {
    origin: { type: 'string' }, verified: { type: 'boolean', enum: [true] }, verifiedAt: { type: 'string', format: 'date-time' },
    listed: { type: 'array', items: { type: 'string' }, description: 'the gateway\'s resources on the origin now listed (another proven gateway\'s listing of a URL is kept)' },
  },
};

export const discoveryListSchema: JsonSchema = {
  type: 'object',
  required: ['x402Version', 'items', 'pagination'],
  properties: {
    x402Version: { type: 'integer' },
    items: { type: 'array', items: discoveryItemSchema },
    pagination: { type: 'object', required: ['limit', 'offset', 'total'], properties: { limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: 'integer' } } },
  },
};
