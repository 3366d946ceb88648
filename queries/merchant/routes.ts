/**
 * GET /v1/gateway/{gateway}/merchant/policies: the payment policies of the gateway that
 * signed in, newest first, with the total for paging. Bearer: that gateway's JWT.
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key, limitSchema, offsetSchema, type JsonSchema } from '../../src/kernel/http/schema.js';
import { requireGatewayToken, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import { normalizedPolicySchema } from '../../src/kernel/domain/policy-schema.js';
import type { MerchantPolicies } from './policies.js';

export const merchantPoliciesSchema: JsonSchema = {
  type: 'object',
  required: ['items', 'total'],
  properties: {
    items: { type: 'array', items: normalizedPolicySchema },
    total: { type: 'integer', description: 'policies of the gateway in all (not deleted), for paging' },
  },
};

export function registerMerchantRoutes(api: Api, ctx: { keyRing: TokenVerifier; gatewayKeys: GatewayLookup; config: Pick<Config, 'http'> }, policies: MerchantPolicies): void {
  api.route<{ limit: number; offset: number }, { gateway: string }>({
    method: 'get',
    path: '/v1/gateway/:gateway/merchant/policies',
    summary: "The signed-in gateway's payment policies",
    description: 'Bearer: a gateway JWT from /v1/gateway/{gateway}/auth/verify for this gateway. None or invalid: 401; another gateway\'s token: 403.',
    tags: ['gateway'],
    security: [{ BearerAuth: [] }],
    before: [requireGatewayToken(ctx.keyRing, { keys: ctx.gatewayKeys })],
    params: { type: 'object', required: ['gateway'], properties: { gateway: { ...base58Key, description: 'gateway account address' } } },
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { limit: limitSchema(100, ctx.config.http.maxLimit), offset: offsetSchema },
    },
    responses: {
      200: { description: 'page of policies', schema: merchantPoliciesSchema },
      400: { description: 'invalid limit or offset' },
      401: { description: 'no bearer token, or an invalid or expired one' },
      403: { description: "another gateway's token, or not a gateway token" },
    },
    async handler({ params, query }) {
      return { body: await policies(params.gateway, { limit: query.limit, offset: query.offset }) };
    },
  });
}
