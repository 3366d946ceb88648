/**
 * Sign-In-With-X (the x402 `sign-in-with-x` extension, CAIP-122; ed25519 on Solana) on a
 * protected route: a payer who already holds an active policy for one of the route's
 * requirements (a subscription, a pay-as-you-go policy, a prepaid credit with room left)
 * proves its wallet and is answered as a payment by that policy is (a JWT, no transaction),
 * without paying again.
 *
 *   402:      extensions["sign-in-with-x"] = {info: {domain, uri, version, nonce, issuedAt,
 *             expirationTime, resources, statement}, supportedChains: [{chainId, type: "ed25519"}], schema}
 *             (standard wire: in PAYMENT-REQUIRED; SPEC.md's wire: in the body)
 *   request:  header SIGN-IN-WITH-X: base64 JSON of the signed message (@x402/extensions'
 *             createSIWxPayload / createSIWxClientExtension build it)
 *
 * Refused with the reason, as a 402: a header that does not parse; a message of another
 * domain, origin or resource, or of another chain than the requirements'; one issued more
 * than `maxAgeSeconds` ago, in the future, expired or not yet valid; a bad signature; a
 * nonce the wallet used before (siwx-nonces.ts: Postgres in the service, which a Redis restart
 * cannot make forget; kept as long as a message stays acceptable); a wallet
 * holding no matching policy. @x402/extensions' own parse, validation and verification run
 * first; this module adds the resource, the chain and the nonce store.
 */
import { randomBytes } from 'node:crypto';
import {
  buildSIWxSchema, parseSIWxHeader, SIGN_IN_WITH_X, validateSIWxMessage, verifySIWxSignature, type SIWxPayload,
} from '@x402/extensions/sign-in-with-x';
import { upstreamUnavailable } from '../../../src/kernel/http/errors.js';
import type { PaymentEngine } from '../engine.js';
import type { SettledResult } from '../idempotency.js';
import { SCHEMES, type PaymentRequirement } from '../requirements.js';
import { PaymentRefused } from '../settle.js';

export { SIGN_IN_WITH_X };

export interface SignInOptions {
  /** shown to the wallet */
  statement?: string;
  /** how long a challenge is good, and the oldest issuedAt taken; default 300 */
  maxAgeSeconds?: number;
}

export type SignedIn = { ok: true; result: SettledResult; requirement: PaymentRequirement } | { ok: false; reason: string };

export interface SignIn {
  /** the 402's `extensions` entry: a fresh challenge for `resource` */
  declare(resource: string): Record<string, unknown>;
  /** a SIGN-IN-WITH-X header for `resource`: the held policy's answer, or why not */
  check(header: string, resource: string): Promise<SignedIn>;
}

/** The resource as a URL; undefined when the request's own Host makes none (a hostile or broken Host header). */
function urlOf(resource: string): URL | undefined {
  try {
    return new URL(resource);
  } catch {
    return undefined;
  }
}

/** The resource a message's uri names, without query or fragment, to compare with the route's. */
function sameResource(uri: string, resource: string): boolean {
  try {
    const a = new URL(uri);
    const b = new URL(resource);
    return a.origin === b.origin && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

export function createSignIn(engine: PaymentEngine, requirements: readonly PaymentRequirement[], opts: SignInOptions = {}): SignIn {
  const maxAge = opts.maxAgeSeconds ?? 300;
  // only a policy scheme's requirement can be held already (an `exact` payment is a transfer, nothing to sign into)
  const held = requirements.filter((r) => (SCHEMES as readonly string[]).includes(r.scheme));
  const networks = [...new Set(held.map((r) => r.network))];
  const now = () => engine.clock.now();

  async function wallet(header: string, resource: string): Promise<{ ok: true; wallet: string } | { ok: false; reason: string }> {
    let p: SIWxPayload;
    try {
      p = parseSIWxHeader(header.trim());
    } catch (err) {
      return { ok: false, reason: `the ${SIGN_IN_WITH_X.toUpperCase()} header is not a sign-in message: ${(err as Error).message}` };
    }
    const url = urlOf(resource);
    if (!url) return { ok: false, reason: `this request's resource ${JSON.stringify(resource)} is not a URL (its Host header): nothing to sign in to` };
    const valid = await validateSIWxMessage(p, url, { maxAge: maxAge * 1000 });
    if (!valid.isValid) return { ok: false, reason: `the sign-in message is refused (${valid.invalidReason}): ${valid.invalidMessage}` };
    if (!sameResource(p.uri, resource)) return { ok: false, reason: `the sign-in message is for ${p.uri}, not this resource (${resource})` };
    if (!networks.includes(p.chainId)) return { ok: false, reason: `the sign-in message is for chain ${p.chainId}; this resource is paid on ${networks.join(', ')}` };
    if (p.type !== 'ed25519') return { ok: false, reason: `the sign-in message's type is ${p.type}; a Solana wallet signs ed25519` };
    const signed = await verifySIWxSignature(p);
    if (!signed.isValid) return { ok: false, reason: `the sign-in message is refused (${signed.invalidReason}): ${signed.invalidMessage}` };
    // last, so that only the wallet's own signature can spend its nonce; kept while the message is young enough to be taken
    const nonces = engine.signInNonces;
    const fresh = await nonces.spend(signed.payer, p.nonce, maxAge * 2 + 60).catch((err: Error) => {
      throw upstreamUnavailable(`the sign-in nonce store (${nonces.store}) did not answer: ${err.message}`);
    });
    if (!fresh) return { ok: false, reason: `the sign-in message's nonce ${p.nonce} was used already: sign a fresh challenge` };
    return { ok: true, wallet: signed.payer };
  }

  return {
    declare(resource) {
      const url = urlOf(resource);
      // no challenge a wallet could sign for a resource that is no URL (the 402 still offers payment)
      if (!url) return {};
      const issued = now();
      const info = {
        domain: url.host, uri: resource, version: '1', nonce: randomBytes(16).toString('hex'),
        issuedAt: new Date(issued).toISOString(), expirationTime: new Date(issued + maxAge * 1000).toISOString(), resources: [resource],
        statement: opts.statement ?? 'Sign in with the wallet that pays for this resource',
      };
      return { [SIGN_IN_WITH_X]: { info, supportedChains: networks.map((chainId) => ({ chainId, type: 'ed25519' })), schema: buildSIWxSchema() } };
    },

    async check(header, resource) {
      const w = await wallet(header, resource);
      if (!w.ok) return w;
      const reasons: string[] = [];
      // the requirements in the route's order: the first the wallet holds a policy for answers
      for (const r of held) {
        try {
          const result = await engine.settle(r, { ok: true, payer: w.wallet, existing: true });
          return { ok: true, result, requirement: r };
        } catch (err) {
          if (!(err instanceof PaymentRefused)) throw err;
          reasons.push(err.reason);
        }
      }
      return { ok: false, reason: `signed in as ${w.wallet}, which holds no policy this resource accepts: ${reasons.join('; ')}` };
    },
  };
}
