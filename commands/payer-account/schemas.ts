/**
 * The request and answer shapes of the payer account's write side (routes.ts), each used
 * for validation and for the OpenAPI document.
 */
import { base58Key, type JsonSchema } from '../../src/kernel/http/schema.js';
import { MAX_CHALLENGE_LENGTH } from '../../src/kernel/auth/signed-messages.js';
import { POLICY_ACTIONS } from './actions.js';

export const ME_SECURITY = [{ BearerAuth: [] }];

export const walletBodySchema: JsonSchema = {
  type: 'object',
  required: ['wallet'],
  additionalProperties: false,
  properties: { wallet: { ...base58Key, description: 'the payer\'s wallet (base58 public key)' } },
};

export const payerChallengeSchema: JsonSchema = {
  type: 'object',
  required: ['nonce', 'wallet', 'expiresAt'],
  properties: {
    nonce: { type: 'string', description: 'the text to sign: ed25519 over its UTF-8 bytes. Single use. `tributary-payer-sign-in|<service>|<wallet>|<random>`: check the purpose, the service and the wallet before signing' },
    wallet: { type: 'string' },
    expiresAt: { type: 'integer', description: 'Unix epoch milliseconds after which the nonce is refused' },
  },
};

export const verifyBodySchema: JsonSchema = {
  type: 'object',
  required: ['wallet', 'nonce', 'signature'],
  additionalProperties: false,
  properties: {
    wallet: { ...base58Key, description: 'the wallet the nonce was issued to' },
    nonce: { type: 'string', minLength: 1, maxLength: MAX_CHALLENGE_LENGTH, description: 'the nonce of POST /v1/me/auth/challenge' },
    signature: {
      type: 'array', minItems: 64, maxItems: 64,
      items: { type: 'integer', minimum: 0, maximum: 255 },
      description: '64-byte ed25519 signature of the nonce\'s UTF-8 bytes, as an array of integers',
    },
  },
};

export const payerTokenSchema: JsonSchema = {
  type: 'object',
  required: ['token', 'expiresIn'],
  properties: {
    token: { type: 'string', description: 'payer JWT (ES256, verifiable through /v1/jwks): sub = the wallet, role = "payer", aud = JWT_AUDIENCE:payer. Send it as Authorization: Bearer to /v1/me/*' },
    expiresIn: { type: 'integer', description: 'lifetime of the token in seconds (OAuth 2.0 expires_in)' },
  },
};

export const policyActionParams: JsonSchema = {
  type: 'object',
  required: ['address', 'action'],
  properties: {
    address: { ...base58Key, description: 'payment policy address (base58)' },
    action: { type: 'string', enum: [...POLICY_ACTIONS] },
  },
};

export const revokeBodySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    mint: { ...base58Key, description: 'the mint whose associated token account of the wallet is revoked' },
    tokenAccount: { ...base58Key, description: 'instead of mint: the token account to revoke (owned by the wallet)' },
  },
};

export const unsignedTransactionSchema: JsonSchema = {
  type: 'object',
  required: ['transaction', 'instruction', 'blockhash', 'lastValidBlockHeight', 'summary'],
  properties: {
    transaction: { type: 'string', description: 'base64 wire transaction, unsigned; fee payer and only signer: the wallet' },
    instruction: { type: 'string', enum: ['change_payment_policy_status', 'delete_payment_policy', 'revoke'] },
    blockhash: { type: 'string' },
    lastValidBlockHeight: { type: 'integer', description: 'after this block height the transaction can no longer land: ask again' },
    summary: { type: 'string', description: 'what the transaction does, in words, for the wallet to show' },
  },
};

export const relayBodySchema: JsonSchema = {
  type: 'object',
  required: ['transaction'],
  additionalProperties: false,
  properties: { transaction: { type: 'string', minLength: 1, maxLength: 2000, description: 'the signed transaction, base64 wire format' } },
};

export const relayResultSchema: JsonSchema = {
  type: 'object',
  required: ['signature', 'status', 'instructions'],
  properties: {
    signature: { type: 'string', description: 'the transaction signature (base58)' },
    status: { type: 'string', enum: ['confirmed', 'pending'] },
    instructions: { type: 'array', items: { type: 'string' }, description: 'what it held, by name' },
  },
};
