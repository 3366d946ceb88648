/**
 * /v1/x402/verify and /v1/x402/settle in the x402 v2 standard shapes, as @x402/core's
 * HTTPFacilitatorClient sends them: `{x402Version, paymentPayload, paymentRequirements}`
 * where paymentPayload is a standard PaymentPayload (`accepted`, `payload` = the Tributary
 * payload, `resource.url` = the URL the payer's proof names) and paymentRequirements a
 * standard PaymentRequirements (standard/requirements.ts). A body is in this shape when its
 * paymentPayload has `accepted`; otherwise it is Tributary's own (service.ts), answered as before.
 *
 * Answers: VerifyResponse {isValid, invalidReason?, payer?}; SettleResponse {success,
 * errorReason?, transaction, network, payer?, extra: {policy, jwt, expiresAt, requirementId,
 * scheme, created}}. `transaction` is always there: the signature sent; for a payer who held
 * a matching policy already, the policy's last payment (or creation) signature from the read
 * model, or "" when the read model has not seen the policy yet. Refusals are 200 with
 * isValid/success false (as the reference facilitator answers); requests that are not
 * valid (terms, no resource) are 400.
 */
import type { RequestHandler } from 'express';
import type { SettleResponse } from '@x402/core/types';
import type { Db } from '../../../infra/postgres/database.js';
import { invalid } from '../../../src/kernel/http/errors.js';
import { base58Key, type JsonSchema } from '../../../src/kernel/http/schema.js';
import type { PaymentRequirement } from '../requirements.js';
import { standardPayloadFromJson, tributaryPayment, type StandardPayload } from '../standard/codec.js';
import { wireRequirement, type StandardRequirement } from '../standard/requirements.js';
import { exchangeBodySchemaOf } from '../standard/exchange-schema.js';
import { settlePayment, verifyPayment, type FacilitatorDeps, type VerifyAnswer } from './service.js';
import { requirementFromWire, wireRequirementSchema } from './wire.js';

export interface StandardExchange { x402Version?: number; paymentPayload: StandardPayload; paymentRequirements: StandardRequirement }

/** A body in the standard shape (its paymentPayload names the requirement it pays in `accepted`). */
export function isStandardExchange(body: unknown): body is StandardExchange {
  const p = (body as { paymentPayload?: unknown } | null)?.paymentPayload;
  return typeof p === 'object' && p !== null && 'accepted' in p;
}

const terms = (wireRequirementSchema as { properties: Record<string, JsonSchema> }).properties;

/** A standard PaymentRequirements: Tributary's terms in `extra`, checked as the Tributary wire checks them. */
export const standardRequirementSchema: JsonSchema = {
  type: 'object',
  required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds', 'extra'],
  properties: {
    scheme: terms['scheme']!, network: terms['network']!,
    amount: { type: 'string', pattern: '^[0-9]{1,20}$', description: 'smallest token units, a decimal string' },
    asset: { ...base58Key, description: 'the token mint' }, payTo: { ...base58Key, description: 'the recipient' },
    maxTimeoutSeconds: { type: 'integer', minimum: 1 },
    extra: {
      type: 'object', required: ['gateway'],
      description: 'Tributary\'s terms: gateway, id, programId, and the scheme\'s own (paymentFrequency, caps, maxChunkAmount, pricePerRequest, ...), as in the accepts of SPEC.md\'s wire',
      properties: Object.fromEntries(Object.entries(terms).filter(([k]) => !['scheme', 'network', 'amount', 'recipient', 'tokenMint', 'extra'].includes(k))
        .concat([['programId', base58Key]])),
    },
  },
};

export const standardExchangeBodySchema: JsonSchema = exchangeBodySchemaOf({
  description: 'x402 v2 standard shape (HTTPFacilitatorClient)',
  accepted: 'the requirement paid in the standard form; extra.id names it',
  payload: { type: 'object', description: 'the Tributary payload: {serializedTransaction, proof} or {payer, proof}' },
  requirements: standardRequirementSchema,
  extensions: true,
});

type Prepared = { ok: true; payment: unknown; r: PaymentRequirement } | { ok: false; reason: string; r: PaymentRequirement };

function prepare(body: StandardExchange, programId: string, graceCapSeconds: number | undefined): Prepared {
  const fromRequirement = body.paymentRequirements.extra['resource'];
  const resource = body.paymentPayload.resource?.url ?? (typeof fromRequirement === 'string' ? fromRequirement : undefined);
  if (resource === undefined) throw invalid('paymentPayload.resource.url (or paymentRequirements.extra.resource) is required: the payer\'s proof names the resource');
  const r = requirementFromWire(wireRequirement(body.paymentRequirements, resource), programId, graceCapSeconds);
  const parsed = standardPayloadFromJson(body.paymentPayload, 'paymentPayload');
  if (!parsed.ok) return { ...parsed, r };
  const decoded = tributaryPayment(parsed.payload);
  return decoded.ok ? { ok: true, payment: decoded.payment, r } : { ...decoded, r };
}

/** The requirement a standard body names (for the caller's gateway check) and its verification. */
export function standardRequirementOf(body: StandardExchange, programId: string, graceCapSeconds: number | undefined): PaymentRequirement {
  return prepare(body, programId, graceCapSeconds).r;
}

export async function verifyStandard(
  deps: FacilitatorDeps, scope: string, body: StandardExchange, programId: string, graceCapSeconds?: number,
): Promise<VerifyAnswer> {
  const p = prepare(body, programId, graceCapSeconds);
  if (!p.ok) return { isValid: false, invalidReason: p.reason };
  return verifyPayment(deps, scope, p.payment, p.r);
}

export async function settleStandard(
  deps: FacilitatorDeps, db: Db, scope: string, body: StandardExchange, programId: string, graceCapSeconds?: number,
): Promise<SettleResponse> {
  const p = prepare(body, programId, graceCapSeconds);
  const network = p.r.network as SettleResponse['network'];
  if (!p.ok) return { success: false, errorReason: p.reason, transaction: '', network };
  const a = await settlePayment(deps, scope, p.payment, p.r);
  const payer = a.payer !== undefined ? { payer: a.payer } : {};
  if (!a.success) return { success: false, ...(a.errorReason !== undefined ? { errorReason: a.errorReason } : {}), transaction: '', network, ...payer };
  const transaction = a.transaction ?? (a.policy !== undefined ? await policySignature(db, a.policy) : undefined) ?? '';
  return {
    success: true, transaction, network, ...payer,
    extra: {
      ...(a.policy !== undefined ? { policy: a.policy } : {}), requirementId: p.r.id, scheme: p.r.scheme, created: a.transaction !== undefined,
      ...(a.jwt !== undefined ? { jwt: a.jwt } : {}), ...(a.expiresAt !== undefined ? { expiresAt: a.expiresAt } : {}),
    },
  };
}

/** The policy's last payment signature, else its creation's, from the policies read model. */
async function policySignature(db: Db, address: string): Promise<string | undefined> {
  const row = await db.selectFrom('payment_policies').select(['last_payment_signature', 'created_signature']).where('address', '=', address).executeTakeFirst();
  return row ? (row.last_payment_signature ?? row.created_signature) : undefined;
}

/** The standard-shape /settle answer (@x402/core's SettleResponse). */
export const standardSettleAnswerSchema: JsonSchema = {
  type: 'object',
  required: ['success', 'transaction', 'network'],
  properties: {
    success: { type: 'boolean' }, errorReason: { type: 'string' }, transaction: { type: 'string' }, network: { type: 'string' }, payer: base58Key,
    extra: {
      type: 'object',
      properties: {
        policy: base58Key, jwt: { type: 'string' }, expiresAt: { type: 'integer' }, requirementId: { type: 'string' }, scheme: { type: 'string' },
        created: { type: 'boolean', description: 'whether this settlement sent a transaction that created the policy' },
      },
    },
  },
};

/**
 * An error answer (4xx, 5xx) of /verify or /settle in the error envelope, with the fields
 * HTTPFacilitatorClient reads from a failed call: it reports a body with `isValid` (verify)
 * or `success` (settle) as VerifyError/SettleError of its invalidReason/errorReason and
 * message; without them a merchant sees "unknown reason". The code is the reason, the
 * envelope's message the message.
 */
export function standardErrorFields(op: 'verify' | 'settle'): RequestHandler {
  return (_req, res, next) => {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const e = body as { error?: unknown; code?: unknown } | null;
      if (res.statusCode < 400 || typeof e?.error !== 'string' || typeof e.code !== 'string') return json(body);
      return json(op === 'verify'
        ? { ...e, isValid: false, invalidReason: e.code, invalidMessage: e.error }
        : { ...e, errorReason: e.code, errorMessage: e.error, transaction: '' });
    };
    next();
  };
}
