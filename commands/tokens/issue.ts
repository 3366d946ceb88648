/**
 * POST /v1/tokens/issue as a function: prove an Active payment policy (any of the five
 * variants, optionally narrowed by mint, policy, recipient, trackingId) or a recent
 * payment (its transaction signature, found in the archive), get a JWT bound to the
 * wallet that carries the proof and to one gateway (its audience, audience.ts): the one
 * named in `gateway`, else the proven payment's, else the one gateway of the wallet's
 * matching policies (policies at several gateways and none named: 400, name one).
 *
 * The wallet must be proven (wallet-proof.ts): `nonce` from POST /v1/tokens/challenge and
 * `signature`, the wallet's ed25519 signature of it. With transactionSignature, the
 * payment must be the proven wallet's. Only proven requests count against the wallet's
 * limit, so nobody can spend a victim's budget; the per-IP limit (the standard one) runs
 * before anything else. TOKENS_REQUIRE_WALLET_PROOF=false restores the open behaviour.
 *
 * Errors (all in the error envelope):
 *   400 invalid input (neither wallet nor signature; a trackingId longer than 64 bytes;
 *       no gateway named while the matching policies are at several)
 *   401 proof_required: no nonce and signature; unauthorized: the nonce unknown, expired,
 *       used, or another wallet's, or the signature not the wallet's
 *   404 the signature names no PaymentRecord (of this wallet, matching the filters) in
 *       the index, or the payment is older than TOKEN_PAYMENT_MAX_AGE_SECONDS
 *   403 no Active policy matches, and no payment proof was given
 *   429 over 200 requests per minute for the wallet (all nodes together), Retry-After
 *   503 the read model or the signing keys are unavailable
 */
import type { Response } from 'express';
import type { Db } from '../../infra/postgres/database.js';
import type { RateLimit } from '../../infra/http/redis-rate-limit.js';
import { AppError, forbidden, invalid, notFound, proofRequired, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { trackingIdToMemo, PAYMENT_MEMO_BYTES } from '../../src/kernel/domain/memo.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';
import { policyClaim, tokenExpiry, type PaymentRecordClaim, type PolicyClaim } from './claims.js';
import { gatewayAudience } from './audience.js';
import { proveWallet, type WalletChallenges } from './wallet-proof.js';
import { activePolicies, MAX_LAST_PAYMENTS, MAX_POLICY_CLAIMS, paymentsOfTransaction, recentPayments, type IssueFilters } from './store.js';

export interface IssueRequest {
  walletPublicKey?: string;
  tokenMint?: string;
  policyAddress?: string;
  recipient?: string;
  transactionSignature?: string;
  trackingId?: string;
  /** the gateway (account address) the token is for; see the header */
  gateway?: string;
  /** from POST /v1/tokens/challenge */
  nonce?: string;
  /** the wallet's ed25519 signature of the nonce's UTF-8 bytes: 64 integers or base58 */
  signature?: number[] | string;
}

export interface TokenBundle {
  token: string;
  /** unix milliseconds */
  expiresAt: number;
  wallet: string;
  /** the gateway the token is good at (its aud names it alone) */
  gateway: string;
  policies: PolicyClaim[];
  lastPayments: PaymentRecordClaim[];
}

export interface IssueDeps {
  db: Db;
  ring: KeyRing;
  /** JWT_AUDIENCE: the token's aud is this narrowed to its gateway */
  audience: string;
  limit: RateLimit;
  now: () => number;
  maxTtlSeconds: number;
  paymentMaxAgeSeconds: number;
  /** a subscription is honoured until next_payment_due + this (its claim says overdue after) */
  subscriptionGraceSeconds: number;
  /** the challenges of wallet proofs; undefined = proofs not required (TOKENS_REQUIRE_WALLET_PROOF=false) */
  challenges: WalletChallenges | undefined;
}

export const WALLET_ROLE = 'wallet';

/** Read-model failures are the service's, not the caller's: 503, never a 500. */
async function read<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw upstreamUnavailable('payment index unavailable');
  }
}

function filtersOf(req: IssueRequest): IssueFilters {
  let memo: Buffer | undefined;
  if (req.trackingId !== undefined) {
    memo = trackingIdToMemo(req.trackingId, PAYMENT_MEMO_BYTES);
    if (!memo) throw invalid(`trackingId must be 1 to ${PAYMENT_MEMO_BYTES} bytes of UTF-8`);
  }
  return {
    ...(req.tokenMint !== undefined ? { tokenMint: req.tokenMint } : {}),
    ...(req.policyAddress !== undefined ? { policyAddress: req.policyAddress } : {}),
    ...(req.recipient !== undefined ? { recipient: req.recipient } : {}),
    ...(req.gateway !== undefined ? { gateway: req.gateway } : {}),
    ...(memo ? { memo } : {}),
  };
}

/** The wallet the request is for: proven by its signed challenge, or (proofs off) as named. */
async function walletOf(deps: IssueDeps, req: IssueRequest): Promise<string | undefined> {
  if (!deps.challenges) return req.walletPublicKey;
  if (req.nonce === undefined || req.signature === undefined) {
    throw proofRequired('a proof of the wallet is required: nonce from POST /v1/tokens/challenge and signature, the wallet\'s ed25519 signature of the nonce');
  }
  return proveWallet(deps.challenges, { nonce: req.nonce, signature: req.signature, ...(req.walletPublicKey !== undefined ? { walletPublicKey: req.walletPublicKey } : {}) });
}

export async function issueToken(deps: IssueDeps, req: IssueRequest, res: Response): Promise<TokenBundle> {
  if (req.walletPublicKey === undefined && req.transactionSignature === undefined && !(deps.challenges && req.nonce !== undefined)) {
    throw invalid('walletPublicKey is required unless transactionSignature is given');
  }
  const filters = filtersOf(req);
  const nowS = Math.floor(deps.now() / 1000);
  const named = await walletOf(deps, req);
  // Count before any database work when the wallet is known; otherwise once the payment names it.
  if (named !== undefined) await deps.limit.enforce(named, res);

  let proof: PaymentRecordClaim | undefined;
  if (req.transactionSignature !== undefined) {
    const found = await read(paymentsOfTransaction(deps.db, req.transactionSignature, named, filters));
    proof = found[0];
    if (!proof) throw notFound('no payment with that transaction signature in the index (for this wallet and filters)');
    if (nowS - proof.timestamp > deps.paymentMaxAgeSeconds) {
      throw notFound(`payment too old: a transactionSignature earns a token for ${deps.paymentMaxAgeSeconds} s after the payment`);
    }
    if (named === undefined) await deps.limit.enforce(proof.payer, res);
  }
  const wallet = named ?? proof?.payer ?? '';

  // The token is good at one gateway: a merchant it is shown to cannot take it elsewhere.
  const provenAt = req.gateway ?? proof?.gateway;
  const policies = await read(activePolicies(deps.db, wallet, provenAt === undefined ? filters : { ...filters, gateway: provenAt }));
  const claims = policies
    .map((p) => policyClaim(p, nowS, deps.subscriptionGraceSeconds))
    .filter((c): c is PolicyClaim => c !== undefined)
    .slice(0, MAX_POLICY_CLAIMS);
  if (claims.length === 0 && !proof) throw forbidden('no active payment policy for this wallet (and filters)');
  const gateway = provenAt ?? onlyGateway(claims);
  const payments = await read(recentPayments(deps.db, wallet, { ...filters, gateway }));

  // the proven payment first, then the latest others
  const lastPayments = proof
    ? [proof, ...payments.filter((p) => p.signature !== proof.signature || p.recordId !== proof.recordId)].slice(0, MAX_LAST_PAYMENTS)
    : payments;
  const exp = tokenExpiry(claims, proof?.timestamp, nowS, deps.maxTtlSeconds);
  const { token } = await deps.ring.sign(
    { role: WALLET_ROLE, gateway, policies: claims, lastPayments },
    { subject: wallet, expiresAt: exp, audience: gatewayAudience(deps.audience, gateway) },
  );
  return { token, expiresAt: exp * 1000, wallet, gateway, policies: claims, lastPayments };
}

/** The gateway of the claims when they are all at one; a 400 asking to name one otherwise. */
function onlyGateway(claims: readonly PolicyClaim[]): string {
  const at = [...new Set(claims.map((c) => c.gateway))];
  if (at.length !== 1 || at[0] === undefined) {
    throw invalid(`the wallet's matching policies are at ${at.length} gateways (${at.join(', ')}); name one with gateway: a token is good at one gateway only`);
  }
  return at[0];
}
