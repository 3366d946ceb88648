/**
 * The JWT of a paid exchange: ES256, signed with the service's active key (commands/signing-keys)
 * and verifiable by anyone through /v1/jwks (commands/x402/client/verify-token.ts). Claims:
 *
 *   sub            the payer's wallet
 *   role           "x402"
 *   gateway        the gateway account the requirement names (where it was paid)
 *   policy         the payment policy's address (the authorization on chain)
 *   requirementId  the id of the requirement paid (accepts[].id)
 *   scheme, network, tokenMint
 *   iss, iat, nbf, exp, jti  (the key ring's)
 *   aud            ["<JWT_AUDIENCE>:gateway:<gateway>:x402", "…:x402:<requirementId>"]
 *                  (commands/tokens/audience.ts): a verifier of another gateway, or of
 *                  the shared audience, refuses it
 *
 * Tokens issued before the binding (aud = the shared JWT_AUDIENCE, no gateway claim, at
 * most X402_JWT_TTL_SECONDS old) are still taken here until they expire: the requirement id
 * they name hashes the gateway, so matching it to this resource's requirement is
 * unambiguous.
 *
 * Verification on the bearer path is the hot path of every protected request, so a
 * verified token's claims are kept in memory until min(exp, now + cacheMs): the same
 * staleness bound as the policy cache (a key retired or a policy paused is honoured
 * within X402_CACHE_MS).
 */
import { decodeJwt, type JWTPayload } from 'jose';
import { createLru } from '../../src/kernel/domain/lru.js';
import { AppError } from '../../src/kernel/http/errors.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Scheme } from './requirements.js';
import { x402Audience, x402RequirementAudience } from '../tokens/audience.js';

/** What the middleware needs of a key ring (infra/signing-keys/key-ring.ts's KeyRing has it). */
export interface X402Signer {
  /** `audience`: the token's aud (the key ring's default, the shared one, when absent) */
  sign(claims: Record<string, unknown>, opts: { subject: string; expiresAt: number; audience?: string | string[] }): Promise<{ token: string }>;
  /**
   * throws when the signature, issuer, audience (`audience`: one of these; else the default), exp or nbf is wrong;
   * with `acceptExpired`, every one but exp (a signer that ignores the option refuses the expired token: nothing is answered from it)
   */
  verify(token: string, opts?: { audience?: string | string[]; acceptExpired?: boolean }): Promise<JWTPayload>;
}

export interface X402Claims {
  sub: string;
  role: 'x402';
  /** the gateway it was paid at; absent in a token issued before the binding (shared aud) */
  gateway?: string;
  policy: string;
  requirementId: string;
  scheme: Scheme;
  network: string;
  tokenMint: string;
  exp: number;
}

export async function issueX402Token(
  signer: X402Signer, baseAudience: string, c: Omit<X402Claims, 'role' | 'exp' | 'sub' | 'gateway'> & { payer: string; gateway: string }, expiresAt: number,
): Promise<string> {
  const claims = {
    role: 'x402', gateway: c.gateway, policy: c.policy, requirementId: c.requirementId, scheme: c.scheme, network: c.network, tokenMint: c.tokenMint,
  };
  const audience = [x402Audience(baseAudience, c.gateway), x402RequirementAudience(baseAudience, c.gateway, c.requirementId)];
  return (await signer.sign(claims, { subject: c.payer, expiresAt, audience })).token;
}

/**
 * The audience a token must carry to be checked here, read from its own (unverified) claims:
 * a bound token its requirement's x402 audience, an older one the shared audience. The
 * signature check that follows makes the claims it was read from authentic.
 */
function expectedAudience(token: string, baseAudience: string): string {
  let p: JWTPayload;
  try {
    p = decodeJwt(token);
  } catch {
    return baseAudience; // not a JWT: the verification refuses it
  }
  const gateway = p['gateway'];
  const requirementId = p['requirementId'];
  return typeof gateway === 'string' && typeof requirementId === 'string' ? x402RequirementAudience(baseAudience, gateway, requirementId) : baseAudience;
}

function asX402Claims(p: JWTPayload): X402Claims | undefined {
  const ok = p['role'] === 'x402' && typeof p.sub === 'string' && typeof p['policy'] === 'string'
    && typeof p['requirementId'] === 'string' && typeof p['scheme'] === 'string' && typeof p.exp === 'number'
    && (p['gateway'] === undefined || typeof p['gateway'] === 'string');
  return ok ? (p as unknown as X402Claims) : undefined;
}

export interface TokenCheck {
  /**
   * the token's claims, or why it is not a valid x402 token; `acceptExpired`: one past its exp
   * too, for looking up what it already bought (a settlement made), never to admit on it
   */
  check(token: string, opts?: { acceptExpired?: boolean }): Promise<{ ok: true; claims: X402Claims } | { ok: false; reason: string }>;
}

export function createTokenCheck(signer: X402Signer, opts: { cacheMs: number; clock: Clock; audience: string; capacity?: number }): TokenCheck {
  const cache = createLru<string, { until: number; claims: X402Claims }>(opts.capacity ?? 50_000);
  return {
    async check(token, how = {}) {
      const now = opts.clock.now();
      const hit = cache.get(token);
      if (hit && now < hit.until) return { ok: true, claims: hit.claims };
      let payload: JWTPayload;
      try {
        payload = await signer.verify(token, { audience: expectedAudience(token, opts.audience), ...(how.acceptExpired === true ? { acceptExpired: true } : {}) });
      } catch (err) {
        if (err instanceof AppError) throw err; // the key store is down: a 503, not a bad token
        const e = err as { code?: string; message?: string };
        return { ok: false, reason: e.code === 'ERR_JWT_EXPIRED' ? 'the JWT has expired' : 'the JWT is not valid' };
      }
      const claims = asX402Claims(payload);
      if (!claims) return { ok: false, reason: 'the JWT is not a payment (x402) token' };
      // an expired token read for a lookup is not kept: the cache answers admissions
      if (opts.cacheMs > 0 && claims.exp * 1000 > now) cache.set(token, { until: Math.min(claims.exp * 1000, now + opts.cacheMs), claims });
      return { ok: true, claims };
    },
  };
}
