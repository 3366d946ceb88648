/**
 * The request and answer shapes of the checkout routes, each used for validation and for
 * the OpenAPI document.
 */
import { base58Key, type JsonSchema } from '../../src/kernel/http/schema.js';
import { SCHEMES } from '../x402/requirements.js';
import { MAX_EXPIRES_IN_SECONDS, MIN_EXPIRES_IN_SECONDS } from './sessions.js';

export const SESSION_ID_PATTERN = '^cs_[A-Za-z0-9_-]{24}$';
export const sessionParams: JsonSchema = {
  type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: SESSION_ID_PATTERN, description: 'checkout session id (cs_…)' } },
};

const amountInput: JsonSchema = {
  type: ['integer', 'string'], description: 'base units (a number, or a string of digits), or whole tokens as a decimal string with a point ("12.5", "12.0"), converted with the mint\'s decimals',
};

export const requirementInputSchema: JsonSchema = {
  type: 'object',
  required: ['scheme', 'network', 'amount', 'recipient', 'gateway', 'tokenMint'],
  description: 'an `accepts` entry of a 402 answer (SPEC "Payment protocol objects"); id, extra, validAfter and deadline are recomputed, other extra fields are kept',
  additionalProperties: true,
  properties: {
    scheme: { type: 'string', enum: [...SCHEMES] },
    network: { type: 'string', description: 'CAIP-2 chain id' },
    amount: amountInput,
    recipient: base58Key, gateway: { ...base58Key, description: 'must be the caller\'s gateway' }, tokenMint: base58Key,
    paymentFrequency: { type: 'string', description: 'deferred: Daily … Annually or Custom:<seconds>; default Monthly' },
    autoRenew: { type: 'boolean' }, maxRenewals: { type: ['integer', 'null'] },
    maxAmountPerPeriod: amountInput, maxChunkAmount: amountInput, maxUnsettledAmount: amountInput, pricePerRequest: amountInput,
    periodLengthSeconds: { type: ['integer', 'string'] }, minExpirySeconds: { type: ['integer', 'string'] }, maxTimeoutSeconds: { type: ['integer', 'string'] },
    memo: { type: 'string', description: 'the policy memo; default the trackingId' },
    currency: { type: 'string' }, description: { type: 'string', maxLength: 1024 },
    resource: { type: 'string', maxLength: 2048, description: 'the resource the payer\'s proof names; default the session\'s page' },
    gracePeriodSeconds: { type: 'integer', minimum: 0 },
  },
};

export const createBodySchema: JsonSchema = {
  type: 'object',
  required: ['requirement', 'trackingId', 'successUrl', 'cancelUrl'],
  additionalProperties: false,
  properties: {
    requirement: requirementInputSchema,
    trackingId: { type: 'string', minLength: 1, maxLength: 64, description: 'the merchant\'s reference: the policy memo (unless the requirement names one) and the Socket.IO room its events reach' },
    successUrl: { type: 'string', maxLength: 2048, description: 'http or https: the payer is sent there with session_id={id} once paid' },
    cancelUrl: { type: 'string', maxLength: 2048, description: 'http or https: the page\'s way out' },
    expiresInSeconds: { type: 'integer', minimum: MIN_EXPIRES_IN_SECONDS, maximum: MAX_EXPIRES_IN_SECONDS, description: 'default 1800' },
    label: { type: 'string', minLength: 1, maxLength: 120, description: 'what the payer is told they pay for' },
  },
};

export const createdSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'url', 'expiresAt'],
  properties: {
    id: { type: 'string' }, url: { type: 'string', description: 'the hosted page: PUBLIC_BASE_URL (else the request\'s origin) + /checkout/{id}' },
    expiresAt: { type: 'string', format: 'date-time' },
  },
};

const statusSchema: JsonSchema = { type: 'string', enum: ['open', 'complete', 'expired'] };

export const merchantViewSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'status', 'requirement', 'trackingId', 'label', 'successUrl', 'cancelUrl', 'expiresAt', 'createdAt'],
  properties: {
    id: { type: 'string' }, status: statusSchema,
    requirement: { type: 'object', description: 'the accepts entry the session sells, as the engine normalized it', additionalProperties: true },
    trackingId: { type: 'string' }, label: { type: ['string', 'null'] }, successUrl: { type: 'string' }, cancelUrl: { type: 'string' },
    expiresAt: { type: 'string', format: 'date-time' }, createdAt: { type: 'string', format: 'date-time' },
    completedAt: { type: 'string', format: 'date-time' }, payer: { type: 'string' }, policy: { type: 'string' }, transaction: { type: 'string' },
  },
};

const money: JsonSchema = {
  type: 'object', required: ['baseUnits', 'ui'],
  properties: { baseUnits: { type: 'string', pattern: '^[0-9]+$' }, ui: { type: 'string', description: 'in whole tokens, with the mint\'s decimals' } },
};

export const publicViewSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'status', 'label', 'payee', 'scheme', 'network', 'tokenMint', 'currency', 'decimals', 'amount', 'schedule', 'fees', 'firstCharge', 'programPaused', 'expiresAt', 'cancelUrl'],
  properties: {
    id: { type: 'string' }, status: statusSchema, label: { type: ['string', 'null'] },
    payee: { type: 'object', required: ['recipient', 'gateway'], properties: { recipient: { type: 'string' }, gateway: { type: 'string' } } },
    scheme: { type: 'string' }, network: { type: 'string' }, tokenMint: { type: 'string' }, currency: { type: 'string' }, decimals: { type: 'integer' },
    amount: money,
    schedule: {
      type: 'object', required: ['kind'], description: 'how often: a subscription\'s period, a pay-as-you-go cap per period, an up-to window, a prepaid credit\'s price per request',
      properties: {
        kind: { type: 'string', enum: ['subscription', 'pay-as-you-go', 'up-to', 'prepaid'] }, paymentFrequency: { type: 'string' }, periodSeconds: { type: 'integer' },
        autoRenew: { type: 'boolean' }, maxRenewals: { type: ['integer', 'null'] }, maxAmountPerPeriod: money, maxChunkAmount: money,
        maxTimeoutSeconds: { type: 'integer' }, pricePerRequest: money,
      },
    },
    fees: {
      type: ['object', 'null'], description: 'as the program takes them from `amount`; null when the gateway is not on this chain',
      properties: {
        gatewayFeeBps: { type: 'integer' }, protocolShareBps: { type: 'integer', description: 'the protocol\'s share of the gateway fee' },
        netMode: { type: 'boolean', description: 'true: the fee is paid on top of the amount' },
        gatewayFee: money, protocolFee: money, recipientReceives: money, payerPays: money,
      },
    },
    firstCharge: {
      type: ['object', 'null'], description: 'what leaves the wallet when the transaction confirms; null when nothing is charged then (payg, upto)',
      properties: { amount: money, at: { type: 'string', enum: ['on confirmation'] } },
    },
    programPaused: { type: 'boolean' },
    expiresAt: { type: 'string', format: 'date-time' }, cancelUrl: { type: 'string' },
    successUrl: { type: 'string', description: 'only once complete' },
  },
};

export const transactionBodySchema: JsonSchema = {
  type: 'object', required: ['payer'], additionalProperties: false,
  properties: { payer: { ...base58Key, description: 'the wallet that pays: signer and fee payer' } },
};

export const transactionSchema: JsonSchema = {
  type: 'object',
  required: ['transaction', 'payer', 'policy', 'proof', 'lastValidBlockHeight'],
  properties: {
    transaction: { type: 'string', description: 'base64 of the unsigned legacy transaction: the wallet signs it (solana:signTransaction) and does not send it' },
    payer: { type: 'string' }, policy: { type: 'string', description: 'the payment policy the transaction creates' },
    proof: {
      type: 'object', required: ['prefix', 'requirementId', 'resource', 'signedAt', 'windowSeconds', 'template'],
      description: 'the proof of possession: the wallet signs (solana:signMessage) the UTF-8 of `template` with {signature} replaced by the signed transaction\'s first signature in base58',
      properties: {
        prefix: { type: 'string' }, requirementId: { type: 'string' }, resource: { type: 'string' },
        signedAt: { type: 'integer', description: 'unix seconds; the proof is accepted within windowSeconds of the server\'s clock' },
        windowSeconds: { type: 'integer' }, template: { type: 'string' },
      },
    },
    lastValidBlockHeight: { type: 'integer', description: 'the transaction\'s blockhash is refused past this block height: ask again' },
  },
};

export const payBodySchema: JsonSchema = {
  type: 'object', required: ['transaction', 'proof'], additionalProperties: false,
  properties: {
    transaction: { type: 'string', minLength: 1, maxLength: 4096, description: 'base64 of the transaction the wallet signed' },
    proof: {
      type: 'object', required: ['signedAt', 'signature'], additionalProperties: false,
      properties: { signedAt: { type: 'integer', description: 'the signedAt of the transaction answer' }, signature: { type: 'string', minLength: 64, maxLength: 90, description: 'base58 ed25519 signature of the proof message' } },
    },
  },
};

export const paidSchema: JsonSchema = {
  type: 'object', required: ['status', 'policy', 'transaction', 'payer', 'redirectUrl'],
  properties: {
    status: { type: 'string', enum: ['complete'] }, policy: { type: 'string' }, transaction: { type: ['string', 'null'] }, payer: { type: 'string' },
    redirectUrl: { type: 'string', description: 'successUrl with session_id={id}' },
  },
};
