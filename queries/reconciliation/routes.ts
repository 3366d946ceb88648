/**
 * GET /v1/gateway/{gateway}/reconciliation: the chain against the service's ledgers for
 * one gateway (reconcile.ts). Credentials as for the gateway's other routes: its JWT, one
 * of its API keys (x-api-key), or the administrator's key.
 */
import type { RequestHandler } from 'express';
import type { Api } from '../../infra/http/routes.js';
import type { ApiKeyLookup } from '../../src/kernel/auth/api-key-lookup.js';
import { checkGatewayWallet, requireGatewayToken, type CurrentGatewayKeys, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import { base58Key, type JsonSchema } from '../../src/kernel/http/schema.js';
import { envelope, envelopeSchema } from '../../src/kernel/http/envelope.js';
import { AppError, forbidden, invalid, unauthorized, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { parseTime } from '../events/params.js';
import { CAUSES } from './compare.js';
import { reconcile, type ReconcileDeps } from './reconcile.js';

const API_KEY_HEADER = 'x-api-key';
/** the default window: the last 30 days */
export const DEFAULT_WINDOW_SECONDS = 30 * 86_400;

const GATEWAY_ADDRESS = new RegExp(String(base58Key['pattern']));

/**
 * A gateway API key for the path's gateway, else what the gateway's other routes take.
 * A path gateway that is no address is refused first (400), whatever the credential.
 */
function gatewayCredential(verifier: TokenVerifier, keys: CurrentGatewayKeys, apiKeys: ApiKeyLookup, adminKey: string | undefined): RequestHandler {
  const jwtOrAdmin = requireGatewayToken(verifier, { keys, adminKey });
  return (req, res, next) => {
    const gateway = String(req.params['gateway'] ?? '');
    if (!GATEWAY_ADDRESS.test(gateway) || gateway.length < 32 || gateway.length > 44) { next(invalid('gateway must be a base58 account address')); return; }
    const key = req.get(API_KEY_HEADER);
    if (key === undefined) { jwtOrAdmin(req, res, next); return; }
    (async () => {
      const owner = await apiKeys(key.trim());
      if (!owner) throw unauthorized(`invalid or revoked ${API_KEY_HEADER}`);
      if (owner.gateway !== req.params['gateway']) throw forbidden('the API key was issued for another gateway');
      await checkGatewayWallet(keys, owner.gateway, owner.createdBy ?? undefined);
    })().then(() => next(), next);
  };
}

/** `since` as unix seconds: ISO 8601 or unix seconds, not in the future; default 30 days before `nowMs`. */
export function parseSince(raw: string | undefined, nowMs: number): number {
  const now = Math.floor(nowMs / 1000);
  if (raw === undefined) return now - DEFAULT_WINDOW_SECONDS;
  const since = Math.floor(parseTime(raw, 'since'));
  if (since > now) throw invalid('since is in the future');
  return since;
}

const amount: JsonSchema = { type: ['string', 'null'], pattern: '^[0-9]+$' };
const differenceSchema: JsonSchema = {
  type: 'object',
  required: ['cause', 'gateway', 'policy', 'source', 'serviceAmount', 'chainAmount', 'signatures', 'detail'],
  properties: {
    cause: { type: 'string', enum: [...CAUSES] },
    gateway: { type: 'string' }, policy: { type: 'string' },
    source: { type: 'string', enum: ['scheduler', 'payg', 'prepaid', 'upto', 'chain'] },
    serviceAmount: amount, chainAmount: amount,
    signatures: { type: 'array', items: { type: 'string' } },
    detail: { type: 'string' },
  },
};
export const reconciliationSchema: JsonSchema = {
  type: 'object',
  required: ['gateways', 'since', 'ranAt', 'policies', 'payments', 'records', 'counts', 'differences'],
  properties: {
    gateways: { type: 'array', items: { type: 'string' } },
    since: { type: 'integer', description: 'unix seconds: payments and records from here on were compared' },
    ranAt: { type: 'integer', description: 'unix milliseconds' },
    policies: { type: 'integer' }, payments: { type: 'integer' }, records: { type: 'integer' },
    counts: { type: 'object', properties: Object.fromEntries(CAUSES.map((c) => [c, { type: 'integer' }])) },
    differences: { type: 'array', items: differenceSchema },
  },
};

export interface ReconciliationRouteDeps {
  keyRing: TokenVerifier; gatewayKeys: CurrentGatewayKeys; apiKeys: ApiKeyLookup; adminKey: string | undefined;
  reconcile: ReconcileDeps;
}

export function registerReconciliationRoute(api: Api, deps: ReconciliationRouteDeps): void {
  api.route<{ since?: string }, { gateway: string }>({
    method: 'get', path: '/v1/gateway/:gateway/reconciliation',
    summary: 'The chain against the service\'s ledgers: every difference with its cause',
    description: 'Bearer: a gateway JWT for this gateway, or x-api-key: one of its API keys, or x-admin-key. Compares, per policy, the PaymentRecords, payment counts, period totals and token movements on chain with the scheduler\'s intents, the pay-as-you-go charges and usage, the prepaid credits and draws and the upto settlements made since `since` (default 30 days ago). Causes: in_doubt (sent, not resolved yet), unbillable (usage the chain refused, with its reason), lost (recorded as paid with no payment on chain, or usage neither charged nor unbillable past its bound), duplicated (a payment by the service\'s signer no record names, or two payments for one record).',
    tags: ['gateway'], security: [{ BearerAuth: [] }, { GatewayApiKey: [] }, { AdminApiKey: [] }],
    before: [gatewayCredential(deps.keyRing, deps.gatewayKeys, deps.apiKeys, deps.adminKey)],
    params: { type: 'object', required: ['gateway'], properties: { gateway: { ...base58Key, description: 'gateway account address' } } },
    query: { type: 'object', additionalProperties: false, properties: { since: { type: 'string', description: 'ISO 8601 or unix seconds' } } },
    responses: {
      200: { description: 'the reconciliation', schema: envelopeSchema(reconciliationSchema) },
      400: { description: 'invalid gateway or since' },
      401: { description: 'no credential, or an invalid, expired or revoked one' },
      403: { description: "another gateway's credential" },
      503: { description: 'the chain or the database did not answer' },
    },
    async handler({ params, query }) {
      const since = parseSince(query.since, deps.reconcile.nowMs());
      const answer = await reconcile(deps.reconcile, { gateway: params.gateway, since }).catch((err: unknown) => {
        if (err instanceof AppError) throw err;
        throw upstreamUnavailable('the chain or the ledgers could not be read');
      });
      return { body: envelope(answer) };
    },
  });
}
