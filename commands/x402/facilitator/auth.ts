/**
 * Who calls the facilitator: a gateway, by its JWT (gateway sign-in) or by one of its API
 * keys (`x-api-key`, commands/api-keys). Either way the request acts for that gateway
 * only: it may verify, settle and meter payments under requirements naming that gateway.
 */
import type { RequestHandler, Response } from 'express';
import type { Db } from '../../../infra/postgres/database.js';
import { parseBearer } from '../../../src/kernel/auth/bearer.js';
import { verifyGatewayToken, type TokenVerifier } from '../../../src/kernel/auth/gateway-token.js';
import { forbidden, unauthorized } from '../../../src/kernel/http/errors.js';
import { gatewayOfApiKey } from '../../api-keys/store.js';

export const API_KEY_HEADER = 'x-api-key';
export const FACILITATOR_SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }, { GatewayApiKey: [] }];
export const FACILITATOR_AUTH_ERRORS = {
  401: { description: 'no credential, or an invalid, expired or revoked one' },
  403: { description: 'the requirements name another gateway than the caller\'s' },
};

export function requireFacilitatorAuth(db: Db, verifier: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    try {
      const key = req.get(API_KEY_HEADER);
      if (key !== undefined) {
        const gateway = await gatewayOfApiKey(db, key.trim());
        if (!gateway) throw unauthorized(`invalid or revoked ${API_KEY_HEADER}`);
        res.locals['facilitatorGateway'] = gateway;
        return next();
      }
      const token = parseBearer(req.get('authorization'));
      if (token === undefined) throw unauthorized(`send a gateway JWT (Authorization: Bearer) or an ${API_KEY_HEADER}`);
      res.locals['facilitatorGateway'] = (await verifyGatewayToken(verifier, token)).gateway;
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
