/**
 * The route module of signing keys and everything signed with them: JWKS, key rotation,
 * gateway sign-in, the merchant policy listing, token issuance. One ring per node is
 * shared by all of them (keyRingOf); its first key is made at start.
 */
import type { AppContext } from '../kernel/context.js';
import type { Api } from '../kernel/http/routes.js';
import type { RouteModule } from './http-app.js';
import { registerJwksRoutes } from '../../queries/jwks/routes.js';
import { registerMerchantRoutes } from '../../queries/merchant/routes.js';
import { readModelMerchantPolicies, type MerchantPolicies } from '../../queries/merchant/policies.js';
import type { GatewayLookup } from '../kernel/auth/gateway-lookup.js';
import { registerGatewayAuthRoutes } from '../../commands/gateway-auth/routes.js';
import { defaultGatewayLookup } from '../kernel/auth/current-keys.js';

/** where it lived before it moved beside the cached lookup; other modules import it from here */
export { defaultGatewayLookup };
import { registerTokenRoutes } from '../../commands/tokens/routes.js';
import { keyRingOf } from '../../infra/signing-keys/key-ring.js';
import { registerKeyAdminRoutes } from '../../commands/keys/routes.js';

export interface SigningRoutesOptions {
  gatewayLookup?: (ctx: AppContext) => GatewayLookup;
  merchantPolicies?: (ctx: AppContext) => MerchantPolicies;
}


export function signingRoutes(opts: SigningRoutesOptions = {}): RouteModule {
  return (api: Api, ctx: AppContext) => {
    const ring = keyRingOf(ctx); // refuses to start without SIGNING_KEY_ENCRYPTION_KEY outside development mode
    ring.warmUp().catch((err: Error) => ctx.logger.error({ err: err.message }, 'could not create the first signing key; retried on first use'));
    registerJwksRoutes(api, ctx);
    registerKeyAdminRoutes(api, ctx);
    registerGatewayAuthRoutes(api, ctx, (opts.gatewayLookup ?? defaultGatewayLookup)(ctx));
    registerMerchantRoutes(api, ctx, (opts.merchantPolicies ?? ((c) => readModelMerchantPolicies(c.dbRead)))(ctx));
    registerTokenRoutes(api, ctx);
  };
}

export const registerSigningRoutes: RouteModule = signingRoutes();
