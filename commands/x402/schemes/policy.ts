/**
 * The path the four Tributary schemes share: a payment is a transaction that creates a
 * payment policy on chain (verify-transaction.ts checks it before anything is sent), or a
 * payer's proof that it holds one already; settling sends it once (idempotency.ts, settle.ts)
 * and answers a JWT naming the policy; a bearer of that JWT is admitted while the policy
 * serves. `policyScheme` builds a scheme's engine from what that scheme alone knows.
 */
import type { AccountRead } from '../../../infra/solana/accounts.js';
import type { PolicyType } from '../../../src/kernel/domain/policy-type.js';
import type { SettledResult } from '../idempotency.js';
import { proofProblem } from '../proof.js';
import type { PaymentRequirement } from '../requirements.js';
import { chainRead, policyMismatch, settleExisting, settlePayment, type PolicyRules } from '../settle.js';
import type { X402Claims } from '../tokens.js';
import { checkPaymentTransaction, type CheckedPayment, type FirstPayment } from '../verify-transaction.js';
import type { SchemeContext, SchemeEngine, X402Grant } from './scheme.js';

type Found = AccountRead & { kind: 'found' };

/** What a scheme whose payment creates a policy names of its own; `policyScheme` builds the rest. */
export interface PolicyScheme<R extends PaymentRequirement> {
  scheme: R['scheme'];
  /** why its policy, of this status after this many payments, does not serve (yet) */
  serving: PolicyRules['serving'];
  requirement: SchemeEngine<R>['requirement'];
  accepted: SchemeEngine<R>['accepted'];
  terms: SchemeEngine<R>['terms'];
  /** absent: the terms are all a new policy is checked for */
  newPolicy?: SchemeEngine<R>['newPolicy'];
  /** absent: the service's cap */
  grace?: SchemeEngine<R>['grace'];
  allowance: SchemeEngine<R>['allowance'];
  policyType: SchemeEngine<R>['policyType'];
  /** default false */
  feeOnTop?: boolean;
  /** false: every payment creates a policy of its own (one the payer holds never serves again); default true */
  reusable?: boolean;
  /** the first period is paid in the Payment transaction itself; absent, it executes no payment */
  firstPayment?: FirstPayment;
  /** how the answer names a policy the payer holds already; default "the active payment policy <address>" */
  held?: (policy: string) => string;
  /** whether a matching policy the payer holds can still serve a request (else a new one is created); `paying`: PolicyRules.usable */
  usable?: (ctx: SchemeContext, r: R, policy: Found, paying?: string) => Promise<boolean>;
  /** a policy recorded as serving the payer whose account may be gone (PolicyRules.recorded) */
  recorded?: (ctx: SchemeContext, r: R, payer: string) => Promise<string | undefined>;
  /** why the payer cannot fund what a new payment would authorize, before it is sent (PolicyRules.fundsProblem) */
  fundsProblem?: (ctx: SchemeContext, r: R, p: CheckedPayment) => Promise<string | undefined>;
  /** what the settlement bought, recorded before its JWT leaves; `paying`: the policy the Payment transaction in hand creates */
  settled?: (ctx: SchemeContext, r: R, s: SettledResult, payer: string, paying: string | undefined) => Promise<void>;
  admit: NonNullable<SchemeEngine<R>['admit']>;
  answered?: SchemeEngine<R>['answered'];
  wireTerms?: SchemeEngine<R>['wireTerms'];
  report?: SchemeEngine<R>['report'];
  settledReport?: SchemeEngine<R>['settledReport'];
}

/** Seconds a new policy's first due date (an upto window's start) may lie ahead of the server's clock. */
export const DUE_SKEW_SECONDS = 60;

const activePolicy = (policy: string): string => `the active payment policy ${policy}`;

const capped = (_r: PaymentRequirement, capSeconds: number): number => capSeconds;
const noSchedule = (): undefined => undefined;

export function policyScheme<R extends PaymentRequirement>(s: PolicyScheme<R>): SchemeEngine<R> {
  const grace = s.grace ?? capped;
  const newPolicy = s.newPolicy ?? noSchedule;
  const rules = (ctx: SchemeContext, r: R): PolicyRules => {
    const { usable, recorded, fundsProblem } = s;
    return {
      ...bound(s, r), reusable: s.reusable ?? true, held: s.held ?? activePolicy, grace: (cap) => grace(r, cap),
      ...(usable ? { usable: (p: Found, paying?: string) => usable(ctx, r, p, paying) } : {}),
      ...(recorded ? { recorded: (payer: string) => recorded(ctx, r, payer) } : {}),
      ...(fundsProblem ? { fundsProblem: (p: CheckedPayment) => fundsProblem(ctx, r, p) } : {}),
    };
  };
  return {
    scheme: s.scheme,
    requirement: s.requirement,
    accepted: s.accepted,
    terms: s.terms,
    newPolicy,
    grace,
    allowance: s.allowance,
    policyType: s.policyType,
    executesPayment: s.firstPayment !== undefined,
    feeOnTop: s.feeOnTop ?? false,

    verify(ctx, p, r, resource) {
      const now = ctx.nowSeconds();
      const proofOf = (payer: string, transactionSignature: string | undefined) =>
        proofProblem(p.payload.proof, payer, { requirementId: r.id, resource: r.resource ?? resource, transactionSignature }, now);
      if ('payer' in p.payload) {
        const problem = proofOf(p.payload.payer, undefined);
        return problem ? { ok: false, reason: problem } : { ok: true, payer: p.payload.payer, existing: true };
      }
      // a policy about to be created: the scheme's terms, then its schedule
      const newTerms = (type: PolicyType): string | undefined => s.terms(r, type, 0) ?? newPolicy(r, type, now);
      const check = checkPaymentTransaction(p.payload.serializedTransaction, r, {
        pdas: ctx.pdas, nowSeconds: now, firstPayment: s.firstPayment, newTerms, allowance: s.allowance(r),
      });
      if (!check.ok) return { ok: false, reason: `the payment transaction is not acceptable: ${check.reason}` };
      // before the idempotency entry: a stored answer goes only to whoever proves to be the payer
      const problem = proofOf(check.payment.payer, check.payment.signature);
      return problem ? { ok: false, reason: problem } : { ok: true, payer: check.payment.payer, payment: check.payment };
    },

    async settle(ctx, r, v) {
      const own = rules(ctx, r);
      const settled = 'existing' in v
        ? await settleExisting(ctx.settle, r, own, v.payer)
        : await ctx.idempotency.once(v.payment.signature, () => settlePayment(ctx.settle, r, own, v.payment));
      const payer = settled.payer ?? v.payer;
      // a transaction sent approved the delegation anew: what this node knew of the payer's funding is stale
      if (settled.transaction !== undefined) ctx.payability.forget(ctx.pdas.userPayment(payer, r.tokenMint));
      await s.settled?.(ctx, r, settled, payer, 'payment' in v ? v.payment.policyAddress : undefined);
      return settled;
    },

    admit: s.admit,
    ...(s.answered ? { answered: s.answered } : {}),
    ...(s.wireTerms ? { wireTerms: s.wireTerms } : {}),
    ...(s.report ? { report: s.report } : {}),
    ...(s.settledReport ? { settledReport: s.settledReport } : {}),
  };
}

/** A scheme's status rule and terms, bound to one requirement: what a policy account is checked against. */
const bound = <R extends PaymentRequirement>(s: Pick<PolicyScheme<R>, 'serving' | 'terms'>, r: R): Pick<PolicyRules, 'serving' | 'terms'> =>
  ({ serving: s.serving, terms: (type, paid) => s.terms(r, type, paid) });

/** The JWT's policy, read through the cache, and still serving the requirement; or why not. */
export async function servingPolicy<R extends PaymentRequirement>(
  ctx: SchemeContext, claims: X402Claims, r: R, s: Pick<PolicyScheme<R>, 'serving' | 'terms'>,
): Promise<Found | string> {
  const read = await chainRead('getAccountInfo', () => ctx.policies.get(claims.policy));
  if (read.kind !== 'found') return `the payment policy ${claims.policy} no longer exists`;
  const mismatch = policyMismatch(read, r, bound(s, r));
  return mismatch ? `the payment policy ${claims.policy} ${mismatch}` : read;
}

/** The grant of a bearer whose JWT names `claims.policy`, before a scheme adds what the request counted. */
export const grantOf = (claims: X402Claims, r: PaymentRequirement): X402Grant =>
  ({ payer: claims.sub, policy: claims.policy, scheme: r.scheme, network: r.network, requirementId: r.id });
