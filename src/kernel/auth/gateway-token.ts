/**
 * Gateway JWTs (issued by gateway sign-in): `sub` = the gateway account address,
 * `role` = "gateway", `signer` = the wallet that signed the challenge. This module checks
 * them on requests; routes that act for a gateway put `requireGatewayToken` in `before`.
 */
import type { Request, RequestHandler } from 'express';
import { decodeJwt, type JWTPayload } from 'jose';
import { AppError, forbidden, unauthorized } from '../http/errors.js';
import { adminKeyMatches, ADMIN_KEY_HEADER } from './admin-key.js';
import { parseBearer } from './bearer.js';

export const GATEWAY_ROLE = 'gateway';

/** What verifies our JWTs: the API node's key ring (infra/signing-keys/key-ring.ts) satisfies it. */
export interface TokenVerifier {
  /** `audience`: the token must carry one of these (else the verifier's default) */
  verify(token: string, opts?: { audience?: string | string[] }): Promise<JWTPayload>;
  /** JWT_AUDIENCE; default "tributary-api" */
  readonly audience?: string;
}

/**
 * The aud of a gateway JWT: "<JWT_AUDIENCE>:gateway-session:<gateway account>". Not the
 * shared audience: a gateway JWT is anyone's for the price of a gateway of their own, so
 * a verifier asking for the shared audience (merchants' checks of wallet and x402 tokens
 * before those were bound to a gateway) took it as one of those. Not a wallet or x402
 * token's audience either (…:gateway:<gateway>, …:gateway:<gateway>:x402). Gateway JWTs
 * issued before (shared aud, at most GATEWAY_TOKEN_TTL_SECONDS old) are still honoured
 * here until they expire: their sub names their gateway, so they are unambiguous.
 */
export function gatewaySessionAudience(baseAudience: string, gateway: string): string {
  return `${baseAudience}:gateway-session:${gateway}`;
}

function gatewayAudiences(verifier: TokenVerifier, token: string): string[] {
  const base = verifier.audience ?? 'tributary-api';
  let sub: unknown;
  try {
    sub = decodeJwt(token).sub;
  } catch {
    return [base]; // not a JWT: the verification refuses it
  }
  return typeof sub === 'string' ? [gatewaySessionAudience(base, sub), base] : [base];
}

export interface GatewayClaims { gateway: string; signer: string; jti?: string; expiresAt?: number; issuedAt?: number }

/** Who a request was authorized as, in `res.locals.auth`. */
export type RequestAuth = { kind: 'gateway'; claims: GatewayClaims } | { kind: 'admin' };

/** Verifies a gateway JWT: 401 when invalid, expired or signed by a retired key; 403 when not a gateway token. */
export async function verifyGatewayToken(verifier: TokenVerifier, token: string): Promise<GatewayClaims> {
  let payload: JWTPayload;
  try {
    payload = await verifier.verify(token, { audience: gatewayAudiences(verifier, token) });
  } catch (err) {
    if (err instanceof AppError) throw err; // keys unavailable: 503, not the caller's fault
    throw unauthorized('invalid or expired token');
  }
  if (payload['role'] !== GATEWAY_ROLE || typeof payload.sub !== 'string') throw forbidden('not a gateway token');
  return {
    gateway: payload.sub,
    signer: typeof payload['signer'] === 'string' ? payload['signer'] : '',
    ...(payload.jti ? { jti: payload.jti } : {}),
    ...(payload.exp ? { expiresAt: payload.exp } : {}),
    ...(payload.iat ? { issuedAt: payload.iat } : {}),
  };
}

/** The gateway's keys now (infra/auth/current-keys.ts): undefined when it does not exist. */
export type CurrentGatewayKeys = (gateway: string) => Promise<{ authority: string; signer: string; active: boolean; sessionsFrom?: number } | undefined>;

/**
 * Throws 401 unless the gateway is active and `wallet` is still its authority or signer
 * (checked at use); `wallet` undefined (a credential the administrator made) needs only
 * the gateway active. Every credential that acts for a gateway passes here on each use:
 * a wallet that stops being the gateway's (a signer rotated after a leak) loses at once
 * what it signed in for, and what it minted meanwhile (API keys).
 */
export async function checkGatewayWallet(keys: CurrentGatewayKeys, gateway: string, wallet: string | undefined, session?: { issuedAt?: number }): Promise<void> {
  const now = await keys(gateway);
  if (!now?.active) throw unauthorized('the gateway of this credential no longer exists or is inactive');
  if (wallet !== undefined && wallet !== now.signer && wallet !== now.authority) {
    throw unauthorized('the wallet that signed in is no longer the gateway\'s authority or signer; sign in again');
  }
  // a gateway JWT (`session`) issued before the gateway revoked its sessions (a token without iat counts as the oldest)
  if (session !== undefined && now.sessionsFrom !== undefined && (session.issuedAt ?? 0) < now.sessionsFrom) {
    throw unauthorized('the gateway revoked its sessions after this token was issued; sign in again');
  }
}

export interface RequireGatewayOptions {
  /**
   * A token is honoured only while the wallet that signed in is still the gateway's
   * authority or signer and the gateway is active (checked at use); 401 otherwise.
   * Required: a route that forgot it let a rotated-out signer act for the token's lifetime.
   */
  keys: CurrentGatewayKeys;
  /** the gateway the request acts for; default the `gateway` path parameter */
  gatewayOf?: (req: Request) => string | undefined;
  /** when set, a matching `x-admin-key` is accepted instead of a gateway token */
  adminKey?: string | undefined;
}

/**
 * Middleware: the request must carry `Authorization: Bearer <gateway JWT>` whose subject
 * is the gateway the request acts for (or, with `adminKey`, the admin key).
 * None → 401; invalid → 401; another gateway's token → 403. Sets `res.locals.auth`.
 */
export function requireGatewayToken(verifier: TokenVerifier, opts: RequireGatewayOptions): RequestHandler {
  const gatewayOf = opts.gatewayOf ?? ((req: Request) => {
    const p = (req.params as Record<string, string | undefined>)['gateway'];
    return typeof p === 'string' ? p : undefined;
  });
  return async (req, res, next) => {
    try {
      const adminHeader = req.get(ADMIN_KEY_HEADER);
      if (opts.adminKey && adminHeader !== undefined) {
        if (!adminKeyMatches(opts.adminKey, adminHeader)) throw unauthorized(`invalid ${ADMIN_KEY_HEADER}`);
        res.locals['auth'] = { kind: 'admin' } satisfies RequestAuth;
        next();
        return;
      }
      const token = parseBearer(req.get('authorization'));
      if (token === undefined) throw unauthorized('missing bearer token');
      const claims = await verifyGatewayToken(verifier, token);
      const wanted = gatewayOf(req);
      if (wanted !== undefined && wanted !== claims.gateway) throw forbidden('token was issued for another gateway');
      await checkGatewayWallet(opts.keys, claims.gateway, claims.signer, claims);
      res.locals['auth'] = { kind: 'gateway', claims } satisfies RequestAuth;
      next();
    } catch (err) {
      next(err);
    }
  };
}
