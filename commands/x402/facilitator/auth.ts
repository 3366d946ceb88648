/**
 * Who calls the facilitator: a gateway, by its JWT (gateway sign-in) or by one of its API
 * keys (`x-api-key`, commands/api-keys). Either way the request acts for that gateway
 * only: it may verify, settle and meter payments under requirements naming that gateway.
 * Either way it is honoured only while the gateway is active and the wallet behind it (the
 * one that signed in, or that created the key) is still the gateway's authority or signer.
 */
import type { RequestHandler, Response } from 'express';
import type { Db } from '../../../infra/postgres/database.js';
import { parseBearer } from '../../../src/kernel/auth/bearer.js';
import { checkGatewayWallet, verifyGatewayToken, type CurrentGatewayKeys, type TokenVerifier } from '../../../src/kernel/auth/gateway-token.js';
import { forbidden, unauthorized } from '../../../src/kernel/http/errors.js';
import { ownerOfApiKey } from '../../api-keys/store.js';

export const API_KEY_HEADER = 'x-api-key';
export const FACILITATOR_SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }, { GatewayApiKey: [] }];
export const FACILITATOR_AUTH_ERRORS = {
  401: { description: 'no credential, or an invalid, expired or revoked one' },
  403: { description: 'the requirements name another gateway than the caller\'s' },
};

export function requireFacilitatorAuth(db: Db, verifier: TokenVerifier, keys: CurrentGatewayKeys): RequestHandler {
  return async (req, res, next) => {
    try {
      const key = req.get(API_KEY_HEADER);
      if (key !== undefined) {
        const owner = await ownerOfApiKey(db, key.trim());
        if (!owner) throw unauthorized(`invalid or revoked ${API_KEY_HEADER}`);
        await checkGatewayWallet(keys, owner.gateway, owner.createdBy ?? undefined);
        res.locals['facilitatorGateway'] = owner.gateway;
        return next();
      }
      const token = parseBearer(req.get('authorization'));
      if (token === undefined) throw unauthorized(`send a gateway JWT (Authorization: Bearer) or an ${API_KEY_HEADER}`);
      const claims = await verifyGatewayToken(verifier, token);
      await checkGatewayWallet(keys, claims.gateway, claims.signer, claims);
      res.locals['facilitatorGateway'] = claims.gateway;
      next();
    } catch (err) {
      next(err);
    }
  };
}

export function callerGateway(res: Response): string {
  return res.locals['facilitatorGateway'] as string;
}

/** The caller may act only under requirements of its own gateway. */
export function requireOwnGateway(res: Response, gateway: string): void {
  const caller = callerGateway(res);
  if (caller !== gateway) throw forbidden(`the requirements name gateway ${gateway}; the credential is gateway ${caller}'s`);
}
