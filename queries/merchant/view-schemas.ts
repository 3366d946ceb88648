/** The merchant view's request and response schemas: validation and OpenAPI from one place. */
import { base58Key, limitSchema, offsetSchema, type JsonSchema } from '../../src/kernel/http/schema.js';
import { envelopeSchema } from '../../src/kernel/http/envelope.js';
import { BUCKETS } from '../../src/kernel/domain/buckets.js';
import { SUBSCRIBER_STATUSES } from './subscribers.js';
import { EXPORT_KINDS } from './exports.js';

const decimal: JsonSchema = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'exact decimal, base units of the mint' };
const seconds: JsonSchema = { type: ['integer', 'null'], description: 'unix seconds' };
const time: JsonSchema = { type: 'string', description: 'ISO 8601 (UTC when no offset) or unix seconds' };

export const gatewayParams: JsonSchema = {
  type: 'object', required: ['gateway'], properties: { gateway: { ...base58Key, description: 'gateway account address' } },
};

export const subscribersQuerySchema = (maxLimit: number): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: limitSchema(100, maxLimit), offset: offsetSchema,
    status: { type: 'string', enum: [...SUBSCRIBER_STATUSES], description: 'active: a policy Active; paused: none Active, one Paused; ended: the rest' },
    tokenMint: { ...base58Key, description: 'only this mint' },
  },
});

export const subscriberSchema: JsonSchema = {
  type: 'object',
  required: ['payer', 'tokenMint', 'status', 'policies', 'activePolicies', 'totalPaid', 'payments', 'firstPaymentAt', 'lastPaymentAt', 'nextDue', 'pastDue'],
  properties: {
    payer: base58Key, tokenMint: base58Key, status: { type: 'string', enum: [...SUBSCRIBER_STATUSES] },
    policies: { type: 'array', items: base58Key, description: "the payer's policies on this gateway and mint, not deleted" },
    activePolicies: { type: 'integer' },
    totalPaid: { ...decimal, description: 'what the payer paid in all, fees included' },
    payments: { type: 'integer' }, firstPaymentAt: seconds, lastPaymentAt: seconds,
    nextDue: { ...seconds, description: 'earliest next due date of its Active policies' },
    pastDue: { type: 'boolean', description: "one of the payer's policies is past due: the scheduler's latest lifecycle event for it is subscription.past_due (not yet recovered or canceled)" },
  },
};

export const subscribersResponse: JsonSchema = envelopeSchema({
  type: 'object', required: ['items', 'total'],
  properties: { items: { type: 'array', items: subscriberSchema }, total: { type: 'integer' } },
});

export const revenueQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    bucket: { type: 'string', enum: [...BUCKETS], default: 'day', description: 'UTC day, ISO week (from Monday) or calendar month' },
    from: { ...time, description: 'first time covered (default: 30 days, 26 weeks or 12 months before `to`)' },
    to: { ...time, description: 'last time covered (default: now); at most 1000 buckets in all' },
    tokenMint: { ...base58Key, description: 'only this mint (default: one series per mint)' },
  },
};

const revenueEntry: JsonSchema = {
  type: 'object',
  required: ['start', 'gross', 'gatewayFee', 'protocolFee', 'net', 'payments', 'newSubscriptions', 'endedSubscriptions', 'mrr'],
  properties: {
    start: { type: 'integer', description: "unix seconds of the bucket's start" },
    gross: { ...decimal, description: 'what payers paid' }, gatewayFee: { ...decimal, description: "the gateway's part of the fee" },
    protocolFee: { ...decimal, description: "the protocol's part of the fee" }, net: { ...decimal, description: 'what recipients received' },
    payments: { type: 'integer' }, newSubscriptions: { type: 'integer' }, endedSubscriptions: { type: 'integer' },
    mrr: { ...decimal, description: "monthly recurring revenue at the bucket's end (active Subscriptions normalized to a month), up to 6 decimals" },
  },
};

export const revenueResponse: JsonSchema = envelopeSchema({
  type: 'object', required: ['bucket', 'from', 'to', 'series'],
  properties: {
    bucket: { type: 'string', enum: [...BUCKETS] }, from: { type: 'integer' }, to: { type: 'integer' },
    series: { type: 'array', items: { type: 'object', required: ['tokenMint', 'buckets'], properties: { tokenMint: base58Key, buckets: { type: 'array', items: revenueEntry } } } },
  },
});

export const exportParams: JsonSchema = {
  type: 'object', required: ['gateway', 'kind'],
  properties: { ...(gatewayParams['properties'] as Record<string, JsonSchema>), kind: { type: 'string', enum: [...EXPORT_KINDS] } },
};

export const exportQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: { type: 'string', enum: ['csv', 'ndjson'], default: 'csv' },
    tokenMint: { ...base58Key, description: 'only this mint' },
    status: { type: 'string', enum: [...SUBSCRIBER_STATUSES], description: 'subscribers only' },
    from: { ...time, description: 'payments: payment time; revenue: bucket start' },
    to: { ...time, description: 'payments: payment time; revenue: bucket start' },
    bucket: { type: 'string', enum: [...BUCKETS], default: 'day', description: 'revenue only' },
  },
};

const nullableText: JsonSchema = { type: ['string', 'null'] };

export const overviewResponse: JsonSchema = envelopeSchema({
  type: 'object', required: ['mrr', 'recentPayments', 'upcomingRenewals', 'webhooks'],
  properties: {
    mrr: { type: 'array', items: { type: 'object', required: ['tokenMint', 'mrr'], properties: { tokenMint: base58Key, mrr: decimal } } },
    recentPayments: { type: 'array', items: { type: 'object', required: ['signature', 'at', 'amount', 'policy'], properties: {
      signature: { type: 'string' }, at: { type: 'integer' }, payer: nullableText, tokenMint: nullableText, amount: decimal, policy: base58Key, trackingId: nullableText,
    } } },
    upcomingRenewals: { type: 'array', items: { type: 'object', required: ['policy', 'nextDue', 'mrr'], properties: {
      policy: base58Key, payer: nullableText, tokenMint: nullableText, nextDue: { type: 'integer' }, mrr: decimal,
    } } },
    webhooks: { type: 'array', items: { type: 'object', required: ['id', 'endpointUrl', 'active', 'delivered', 'pending', 'dead'], properties: {
      id: { type: 'integer' }, endpointUrl: { type: 'string' }, active: { type: 'boolean' },
      delivered: { type: 'integer', description: 'last 24 hours' }, pending: { type: 'integer' }, dead: { type: 'integer', description: 'last 24 hours' },
      lastStatus: { type: ['integer', 'null'] }, lastError: nullableText, lastAttemptAt: nullableText,
    } } },
  },
});
