/**
 * Payer JWTs (POST /v1/me/auth/verify): `sub` = the wallet that signed the challenge,
 * `role` = "payer", aud = "<JWT_AUDIENCE>:payer". A kind of its own: a gateway JWT (role
 * "gateway", aud …:gateway-session:<gateway>) is refused here, and a payer JWT is refused
 * by the gateway token check (src/kernel/auth/gateway-token.ts) for its role and its
 * audience alike, so neither passes as the other even where one check were loosened.
 */
import type { RequestHandler, Response } from 'express';
import type { JWTPayload } from 'jose';
import { AppError, forbidden, unauthorized } from '../http/errors.js';
import { parseBearer } from './bearer.js';
import type { TokenVerifier } from './gateway-token.js';
import { isPublicKey } from '../domain/pda.js';

export const PAYER_ROLE = 'payer';

/** Short-lived: what it lets do is build and send the wallet's own signed transactions and read its lists. */
export const PAYER_TOKEN_TTL_SECONDS = 900;

export function payerAudience(baseAudience: string): string {
  return `${baseAudience}:payer`;
}

/** The wallet of a payer JWT: 401 when invalid or expired, 403 when a valid JWT of another kind. */
export async function verifyPayerToken(verifier: TokenVerifier, token: string): Promise<string> {
  let payload: JWTPayload;
  try {
    payload = await verifier.verify(token, { audience: payerAudience(verifier.audience ?? 'tributary-api') });
  } catch (err) {
    if (err instanceof AppError) throw err; // keys unavailable: 503
    throw unauthorized('invalid or expired payer token: sign in with POST /v1/me/auth/challenge and /v1/me/auth/verify');
  }
  if (payload['role'] !== PAYER_ROLE || !isPublicKey(payload.sub)) throw forbidden('not a payer token');
  return payload.sub;
}

/** Middleware: `Authorization: Bearer <payer JWT>`; sets the wallet for `payerOf`. */
export function requirePayerToken(verifier: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    try {
      const token = parseBearer(req.get('authorization'));
      if (token === undefined) throw unauthorized('missing bearer token: sign in with POST /v1/me/auth/challenge and /v1/me/auth/verify');
      res.locals['payer'] = await verifyPayerToken(verifier, token);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** The wallet requirePayerToken put on the response. */
export function payerOf(res: Response): string {
  const wallet = res.locals['payer'];
  if (typeof wallet !== 'string') throw unauthorized('missing payer token');
  return wallet;
}
