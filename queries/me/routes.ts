/**
 * The payer's own account, its read side: GET /v1/me/subscriptions and /v1/me/payments,
 * for the wallet of the payer JWT (POST /v1/me/auth/verify). Never cached in front of
 * express: each answer is one wallet's, behind its token.
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Api } from '../../infra/http/routes.js';
import { limitSchema, offsetSchema, type JsonSchema } from '../../src/kernel/http/schema.js';
import { payerOf, requirePayerToken } from '../../src/kernel/auth/payer-token.js';
import type { TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import { mintDecimalsReader } from './decimals.js';
import { listSubscriptions, MAX_SUBSCRIPTIONS } from './subscriptions.js';
import { listPayments } from './payments.js';

export interface MeRouteDeps {
  dbRead: Db;
  rpc: RpcClient;
  keyRing: TokenVerifier;
  config: Pick<Config, 'http' | 'solana'>;
}

const nullable = (type: string): JsonSchema => ({ type, nullable: true });
const amounts = {
  amount: { type: 'string', description: 'base units (u64 as a decimal string)' },
  amountDisplay: { ...nullable('string'), description: 'the amount with the mint\'s decimals ("1.5"); null when the chain could not say them' },
};

const lastPaymentSchema: JsonSchema = {
  type: 'object',
  properties: { signature: { type: 'string' }, at: { type: 'integer', description: 'unix seconds' }, ...amounts },
};

const subscriptionSchema: JsonSchema = {
  type: 'object',
  properties: {
    address: { type: 'string', description: 'payment policy address' },
    variant: { type: 'string', description: 'Subscription, PayAsYouGo, Milestone, OneTime, UpTo' },
    scheme: { ...nullable('string'), description: 'the x402 scheme that makes this variant (deferred, x402://payg, x402://upto, x402://prepaid); null otherwise' },
    status: { type: 'string', enum: ['Active', 'Paused', 'Completed'] },
    gateway: { type: 'string' },
    gatewayName: nullable('string'),
    merchant: { type: 'string', description: 'the recipient of the payments' },
    tokenMint: nullable('string'),
    decimals: nullable('integer'),
    ...amounts,
    amount: { ...nullable('string'), description: 'base units: a Subscription\'s amount per period, a PayAsYouGo\'s cap per period, an UpTo\'s cap, a OneTime\'s credit, a Milestone\'s escrow' },
    frequencySeconds: nullable('integer'),
    totalPaid: { type: 'string' },
    totalPaidDisplay: nullable('string'),
    paymentCount: { type: 'integer' },
    nextPaymentDue: { ...nullable('integer'), description: 'unix seconds; null while paused or when nothing is scheduled' },
    paidThrough: { ...nullable('integer'), description: 'unix seconds: the end of the period paid (a Subscription with a payment)' },
    trackingId: { type: 'string' },
    createdAt: nullable('integer'),
    lastPayments: { type: 'array', items: lastPaymentSchema, description: 'the newest three' },
  },
};

const paymentSchema: JsonSchema = {
  type: 'object',
  properties: {
    signature: { type: 'string' }, slot: { type: 'integer' }, at: { type: 'integer', description: 'unix seconds' },
    policy: { type: 'string' }, gateway: { type: 'string' }, merchant: { type: 'string' },
    tokenMint: nullable('string'), decimals: nullable('integer'), ...amounts, recordId: { type: 'integer' }, trackingId: nullable('string'),
  },
};

const authErrors = {
  401: { description: 'no payer token, or an invalid or expired one, or a JWT of another kind (a gateway token): sign in with POST /v1/me/auth/challenge' },
  403: { description: 'a JWT of the payer audience without the payer role or a wallet subject' },
};

export function registerMeRoutes(api: Api, ctx: MeRouteDeps): void {
  const decimalsOf = mintDecimalsReader(ctx.rpc, ctx.config.solana.commitment);
  const payer = requirePayerToken(ctx.keyRing);
  api.route({
    method: 'get',
    path: '/v1/me/subscriptions',
    summary: 'Every payment policy of the signed-in wallet, across gateways and mints',
    description: `Newest first, at most ${MAX_SUBSCRIPTIONS}; deleted (canceled) policies are left out. Amounts in base units and with the mint's decimals.`,
    tags: ['payer'],
    security: [{ BearerAuth: [] }],
    before: [payer],
    responses: {
      200: { description: 'the wallet\'s policies', schema: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: subscriptionSchema } } } },
      ...authErrors,
    },
    async handler({ res }) {
      return { body: { data: await listSubscriptions(ctx.dbRead, decimalsOf, payerOf(res)) } };
    },
  });
  api.route<{ limit: number; offset: number }>({
    method: 'get',
    path: '/v1/me/payments',
    summary: 'The signed-in wallet\'s payments, newest first, paged',
    tags: ['payer'],
    security: [{ BearerAuth: [] }],
    query: { type: 'object', additionalProperties: false, properties: { limit: limitSchema(50, ctx.config.http.maxLimit), offset: offsetSchema } },
    before: [payer],
    responses: {
      200: {
        description: 'a page of payments',
        schema: { type: 'object', required: ['data', 'limit', 'offset'], properties: { data: { type: 'array', items: paymentSchema }, limit: { type: 'integer' }, offset: { type: 'integer' } } },
      },
      400: { description: 'limit or offset out of range' },
      ...authErrors,
    },
    async handler({ query, res }) {
      return { body: { data: await listPayments(ctx.dbRead, decimalsOf, payerOf(res), query), limit: query.limit, offset: query.offset } };
    },
  });
}
