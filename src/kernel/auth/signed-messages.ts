/**
 * The texts a wallet signs for this service, each naming its purpose, the service and the
 * key it is for, so that a signature given for one can never serve another:
 *
 *   <purpose>|<service>|<subject>|<random>
 *
 *   tributary-gateway-sign-in|<service>|<gateway account>|<random>   gateway sign-in nonce
 *   tributary-wallet-token|<service>|<wallet>|<random>               POST /v1/tokens/challenge nonce
 *   tributary-payer-sign-in|<service>|<wallet>|<random>              POST /v1/me/auth/challenge nonce
 *   (tributary-x402|<requirement id>|<resource URL>|...              the x402 payment proof, commands/x402/proof.ts)
 *
 * `service` is the host of PUBLIC_BASE_URL, else JWT_AUDIENCE: the same on every node of a
 * deployment, and another deployment's (devnet, a staging copy) differs. Before, a sign-in
 * nonce was bare random text: a page of any other service could hand one of ours to a
 * gateway's signer as its own sign-in, and the signature signed the gateway in here; nothing
 * in the text told the wallet what it was for. The server checks all three fields on use,
 * clients (the dashboard, `tributary sign`) show or check them before signing.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';

export const SIGN_PURPOSES = {
  gatewaySignIn: 'tributary-gateway-sign-in',
  walletToken: 'tributary-wallet-token',
  payerSignIn: 'tributary-payer-sign-in',
} as const;
export type SignPurpose = (typeof SIGN_PURPOSES)[keyof typeof SIGN_PURPOSES];

/** Longest challenge text accepted (the service is a host name, at most 253 characters). */
export const MAX_CHALLENGE_LENGTH = 400;

export interface Challenge { purpose: SignPurpose; service: string; subject: string }

/** The service's name in signed texts: PUBLIC_BASE_URL's host, else the JWT audience. */
export function serviceName(publicUrl: string | undefined, audience: string): string {
  if (publicUrl === undefined) return audience;
  try {
    return new URL(publicUrl).host || audience;
  } catch {
    return audience;
  }
}

/** A fresh challenge text for `subject` (32 random bytes, base58). */
export function challengeText(c: Challenge): string {
  return [c.purpose, c.service, c.subject, bs58.encode(randomBytes(32))].join('|');
}

/** The fields of a challenge text; undefined when it is not one (another purpose, bare text). */
export function parseChallenge(text: string): Challenge | undefined {
  if (text.length > MAX_CHALLENGE_LENGTH) return undefined;
  const parts = text.split('|');
  if (parts.length !== 4) return undefined;
  const [purpose, service, subject, random] = parts as [string, string, string, string];
  const known = Object.values(SIGN_PURPOSES) as string[];
  if (!known.includes(purpose) || !service || !subject || !random) return undefined;
  return { purpose: purpose as SignPurpose, service, subject };
}

/** Why `text` is not a challenge of `want` (purpose, service, subject); undefined when it is. */
export function challengeProblem(text: string, want: Challenge): string | undefined {
  const got = parseChallenge(text);
  if (got?.purpose !== want.purpose) return `the nonce is not a ${want.purpose} challenge`;
  if (got.service !== want.service) return `the nonce was issued for the service ${got.service}, not ${want.service}`;
  if (got.subject !== want.subject) return `the nonce was issued for ${got.subject}, not ${want.subject}`;
  return undefined;
}
