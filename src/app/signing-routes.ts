/**
 * The route module of signing keys and everything signed with them: JWKS, key rotation,
 * gateway sign-in, the merchant policy listing, token issuance. They share the node's one
 * key ring (built by buildNode); its first key is made at start.
 */
import type { Api } from '../../infra/http/routes.js';
import type { AppNode, RouteModule } from './node.js';
import { registerJwksRoutes } from '../../queries/jwks/routes.js';
import { registerMerchantRoutes } from '../../queries/merchant/routes.js';
import { readModelMerchantPolicies, type MerchantPolicies } from '../../queries/merchant/policies.js';
import type { GatewayLookup } from '../kernel/auth/gateway-lookup.js';
import { registerGatewayAuthRoutes } from '../../commands/gateway-auth/routes.js';
import { registerTokenRoutes } from '../../commands/tokens/routes.js';
import { registerKeyAdminRoutes } from '../../commands/signing-keys/routes.js';

export interface SigningRoutesOptions {
  gatewayLookup?: (node: AppNode) => GatewayLookup;
  merchantPolicies?: (node: AppNode) => MerchantPolicies;
}

export function signingRoutes(opts: SigningRoutesOptions = {}): RouteModule {
  return (api: Api, node: AppNode) => {
    node.keyRing.warmUp().catch((err: Error) => node.logger.error({ err: err.message }, 'could not create the first signing key; retried on first use'));
    registerJwksRoutes(api, node);
    registerKeyAdminRoutes(api, node);
    registerGatewayAuthRoutes(api, node, opts.gatewayLookup?.(node) ?? node.gatewayLookup);
    registerMerchantRoutes(api, node, (opts.merchantPolicies ?? ((n) => readModelMerchantPolicies(n.dbRead)))(node));
    registerTokenRoutes(api, node);
  };
}

export const registerSigningRoutes: RouteModule = signingRoutes();
