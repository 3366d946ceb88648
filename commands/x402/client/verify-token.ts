/**
 * For merchants: verify a JWT issued by the Tributary service (POST /v1/tokens/issue,
 * gateway sign-in, the x402 flow) against the service's published keys.
 *
 *   const verifier = createTokenVerifier({ jwksUrl: 'https://api.example.com/v1/jwks',
 *     issuer: 'tributary', audience: 'tributary-api', gateway: '<your gateway account>' });
 *   const claims = await verifier.verifyWalletToken(token);   // throws when invalid
 *   claims.sub        // the wallet the token is bound to
 *   claims.policies   // PolicyClaim[]: what the wallet has authorized at your gateway, per variant
 *
 * A wallet token is good at one gateway: its aud is "<audience>:gateway:<gateway>"
 * (commands/tokens/audience.ts), so a token a wallet showed merchant A is refused by
 * merchant B's verifier, and by any verifier not given `gateway`. Tokens issued before the
 * binding (aud = the shared audience, at most TOKEN_MAX_TTL_SECONDS old) still verify
 * until they expire where every policy and payment they hold is at this gateway.
 *
 * An x402 token (the JWT of a paid 402 exchange, role "x402") is good at the gateway it was
 * paid at: its aud is ["<audience>:gateway:<gateway>:x402", "…:x402:<requirement id>"].
 *
 *   const claims = await verifier.verifyX402Token(jwt, { requirementIds: [accepts[0].id] });
 *   claims.sub, claims.policy, claims.requirementId   // the payer, its policy, what was paid for
 *
 * verifyX402Token refuses another gateway's token and, with `requirementIds`, one paid for
 * another requirement. Tokens issued before the binding (shared aud, no gateway claim, at
 * most X402_JWT_TTL_SECONDS old) verify until they expire only with `requirementIds` naming
 * theirs: an id hashes the requirement's gateway, so that is unambiguous; without it they
 * are refused. A merchant verifying with any JWT library instead asks for the audience
 * "<audience>:gateway:<its gateway>:x402" (or the requirement's) and gets the same refusals.
 *
 * The key set is fetched with jose's createRemoteJWKSet: cached, and refetched when a
 * token names a kid it has not seen (a rotation), at most once per cooldown. Tokens
 * signed by a rotated-out key verify until its grace period ends, because the service
 * publishes the key until then; after that the kid is unknown and verification fails.
 */
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { PaymentRecordClaim, PolicyClaim } from '../../tokens/claims.js';
import { gatewayAudience, x402Audience, x402RequirementAudience } from '../../tokens/audience.js';

export type { PaymentRecordClaim, PolicyClaim };

export interface VerifierOptions {
  /** the service's /v1/jwks (or /.well-known/jwks.json) URL */
  jwksUrl: string | URL;
  /** JWT_ISSUER of the service (default "tributary") */
  issuer?: string;
  /** JWT_AUDIENCE of the service (default "tributary-api") */
  audience?: string;
  /** your gateway's account address: wallet tokens are verified only for it (required by verifyWalletToken) */
  gateway?: string;
  /** the time verification happens at; default the system clock (tests inject one) */
  now?: () => number;
  /** seconds of clock skew tolerated on exp and nbf; default 0 */
  clockToleranceSeconds?: number;
  /** how long a fetched key set is trusted before refetching, ms; default 10 min (jose) */
  cacheMaxAgeMs?: number;
  /** minimum time between two fetches, ms; default 30 s (jose) */
  cooldownMs?: number;
}

/** Claims of a token bundle's JWT (POST /v1/tokens/issue). */
export interface WalletTokenClaims extends JWTPayload {
  sub: string;
  iss: string;
  aud: string | string[];
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  role: 'wallet';
  /** the gateway the token is good at (the verifier's) */
  gateway: string;
  policies: PolicyClaim[];
  lastPayments: PaymentRecordClaim[];
}

export interface X402TokenClaims extends JWTPayload {
  /** the payer's wallet */
  sub: string;
  exp: number;
  jti: string;
  role: 'x402';
  /** the gateway it was paid at (the verifier's) */
  gateway: string;
  /** the payment policy's address on chain */
  policy: string;
  /** the id of the requirement paid for (accepts[].id) */
  requirementId: string;
  scheme: string;
  network: string;
  tokenMint: string;
}

export interface TokenVerifier {
  /**
   * Verifies signature, alg (ES256), issuer, audience (the shared one, or with `gateway` also
   * that gateway's), exp and nbf; throws a jose error otherwise.
   */
  verify(token: string): Promise<{ claims: JWTPayload; kid: string | undefined }>;
  /** As verify, and requires a wallet token (role "wallet") for `gateway`, with its policies and payments. */
  verifyWalletToken(token: string): Promise<WalletTokenClaims>;
  /**
   * Requires an x402 token paid at `gateway` and, with `requirementIds`, for one of them
   * (the ids of the requirements the resource accepts); throws otherwise.
   */
  verifyX402Token(token: string, opts?: { requirementIds?: readonly string[] }): Promise<X402TokenClaims>;
}

export function createTokenVerifier(opts: VerifierOptions): TokenVerifier {
  const keys: JWTVerifyGetKey = createRemoteJWKSet(new URL(opts.jwksUrl), {
    ...(opts.cacheMaxAgeMs !== undefined ? { cacheMaxAge: opts.cacheMaxAgeMs } : {}),
    ...(opts.cooldownMs !== undefined ? { cooldownDuration: opts.cooldownMs } : {}),
  });
  const issuer = opts.issuer ?? 'tributary';
  const audience = opts.audience ?? 'tributary-api';
  const gateway = opts.gateway;
  const ownAudience = gateway === undefined ? undefined : gatewayAudience(audience, gateway);

  async function verify(token: string, audiences?: string[]) {
    const { payload, protectedHeader } = await jwtVerify(token, keys, {
      algorithms: ['ES256'],
      issuer,
      audience: audiences ?? (ownAudience === undefined ? audience : [audience, ownAudience]),
      requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      ...(opts.now ? { currentDate: new Date(opts.now()) } : {}),
      ...(opts.clockToleranceSeconds ? { clockTolerance: opts.clockToleranceSeconds } : {}),
    });
    return { claims: payload, kid: protectedHeader.kid };
  }

  return {
    verify,
    async verifyWalletToken(token) {
      if (gateway === undefined || ownAudience === undefined) {
        throw new Error('createTokenVerifier needs `gateway` (your gateway account address) to verify wallet tokens: each is good at one gateway');
      }
      const { claims } = await verify(token);
      const policies: unknown = claims['policies'];
      const payments: unknown = claims['lastPayments'];
      if (claims['role'] !== 'wallet' || !Array.isArray(policies) || !Array.isArray(payments)) {
        throw new Error('not a wallet token');
      }
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      const bound = audiences.includes(ownAudience) && claims['gateway'] === gateway;
      // issued before the binding: good only where everything it proves is at this gateway
      const at = [...(policies as { gateway?: unknown }[]), ...(payments as { gateway?: unknown }[])].map((c) => c.gateway);
      const legacy = claims['gateway'] === undefined && at.length > 0 && at.every((g) => g === gateway);
      if (!bound && !legacy) throw new Error('the wallet token was issued for another gateway');
      return { ...claims, gateway } as WalletTokenClaims;
    },
    async verifyX402Token(token, o = {}) {
      if (gateway === undefined) {
        throw new Error('createTokenVerifier needs `gateway` (your gateway account address) to verify x402 tokens: each is good at the gateway it was paid at');
      }
      const ids = o.requirementIds;
      const own = ids === undefined ? [x402Audience(audience, gateway)] : ids.map((id) => x402RequirementAudience(audience, gateway, id));
      // the shared audience only for a token issued before the binding, checked below
      const { claims } = await verify(token, [...own, audience]);
      const ok = claims['role'] === 'x402' && typeof claims['policy'] === 'string' && typeof claims['requirementId'] === 'string'
        && typeof claims['scheme'] === 'string' && typeof claims['network'] === 'string';
      if (!ok) throw new Error('not an x402 token');
      const requirementId = claims['requirementId'] as string;
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      const bound = claims['gateway'] === gateway && own.some((a) => audiences.includes(a));
      // issued before the binding: only where the requirement paid for is one of ours (its id hashes our gateway)
      const legacy = claims['gateway'] === undefined && ids !== undefined && ids.includes(requirementId);
      if (!bound && !legacy) {
        throw new Error(ids === undefined || claims['gateway'] !== gateway ? 'the x402 token was paid at another gateway' : `the x402 token was paid for requirement ${requirementId}, which this resource does not accept`);
      }
      return { ...claims, gateway } as X402TokenClaims;
    },
  };
}
