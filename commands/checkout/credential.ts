/**
 * Who creates and reads checkout sessions: a gateway, by one of its API keys (x-api-key)
 * or its JWT (Authorization: Bearer), checked at use as the gateway's other routes check
 * them (the gateway active, the wallet that made the credential still its authority or
 * signer). The gateway it acts for is put in `res.locals.checkoutGateway`.
 */
import type { RequestHandler, Response } from 'express';
import type { ApiKeyLookup } from '../../src/kernel/auth/api-key-lookup.js';
import { checkGatewayWallet, verifyGatewayToken, type CurrentGatewayKeys, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import { parseBearer } from '../../src/kernel/auth/bearer.js';
import { unauthorized } from '../../src/kernel/http/errors.js';

export const API_KEY_HEADER = 'x-api-key';
export const CHECKOUT_SECURITY: Record<string, string[]>[] = [{ GatewayApiKey: [] }, { BearerAuth: [] }];

export interface CredentialDeps { keyRing: TokenVerifier; gatewayKeys: CurrentGatewayKeys; apiKeys: ApiKeyLookup }

/** The gateway a credential acts for, or throws 401/403. */
export async function gatewayOfCredential(deps: CredentialDeps, apiKey: string | undefined, authorization: string | undefined): Promise<string> {
  if (apiKey !== undefined) {
    const owner = await deps.apiKeys(apiKey.trim());
    if (!owner) throw unauthorized(`invalid or revoked ${API_KEY_HEADER}`);
    await checkGatewayWallet(deps.gatewayKeys, owner.gateway, owner.createdBy ?? undefined);
    return owner.gateway;
  }
  const token = parseBearer(authorization);
  if (token === undefined) throw unauthorized(`a gateway API key (${API_KEY_HEADER}) or a gateway JWT (Authorization: Bearer) is required`);
  const claims = await verifyGatewayToken(deps.keyRing, token);
  await checkGatewayWallet(deps.gatewayKeys, claims.gateway, claims.signer, claims);
  return claims.gateway;
}

export function requireCheckoutCredential(deps: CredentialDeps): RequestHandler {
  return (req, res, next) => {
    gatewayOfCredential(deps, req.get(API_KEY_HEADER), req.get('authorization')).then((gateway) => {
      res.locals['checkoutGateway'] = gateway;
      next();
    }, next);
  };
}

export function callerGateway(res: Response): string {
  const g: unknown = res.locals['checkoutGateway'];
  if (typeof g !== 'string') throw unauthorized('no gateway credential');
  return g;
}
