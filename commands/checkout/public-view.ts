/**
 * What a payer sees of a checkout session (GET /v1/checkout/sessions/{id}/public): who is
 * paid, how much and how often, the fees as the program takes them, the first charge and
 * when, and the way out. The id is the capability: nothing here is the merchant's secret.
 */
import { frequencySeconds } from '../../src/kernel/domain/frequency.js';
import { frequencyText, type PaymentRequirement } from '../x402/requirements.js';
import { readFeeTerms, splitFees, type FeeReadDeps } from './fees.js';
import { requirementOf, type MintAmounts, type RequirementContext } from './requirement.js';
import { statusAt, storedOf, type SessionRow } from './store.js';
import type { Money, PublicView, Schedule } from '../../src/kernel/wire/answers/checkout.js';

export interface PublicDeps { amounts: MintAmounts; requirements: RequirementContext; fees: FeeReadDeps }

// the answer's shape is the wire module's, which the checkout page reads as well
export type { Money, PublicView, Schedule } from '../../src/kernel/wire/answers/checkout.js';

function scheduleOf(r: PaymentRequirement, money: (u: bigint) => Money): Schedule {
  switch (r.scheme) {
    case 'deferred':
      return {
        kind: 'subscription', paymentFrequency: frequencyText(r.paymentFrequency), periodSeconds: Number(frequencySeconds(r.paymentFrequency)),
        autoRenew: r.autoRenew, maxRenewals: r.maxRenewals,
      };
    case 'x402://payg':
      return { kind: 'pay-as-you-go', periodSeconds: Number(r.periodLengthSeconds), maxAmountPerPeriod: money(r.maxAmountPerPeriod), maxChunkAmount: money(r.maxChunkAmount) };
    case 'x402://upto':
      return { kind: 'up-to', maxTimeoutSeconds: Number(r.maxTimeoutSeconds) };
    case 'x402://prepaid':
      return { kind: 'prepaid', pricePerRequest: money(r.pricePerRequest) };
  }
}

/** What paying `r` costs now: the amount, how often, the fees as the program takes them, the first charge. */
export type Quote = Pick<PublicView, 'payee' | 'scheme' | 'network' | 'tokenMint' | 'currency' | 'decimals' | 'amount' | 'schedule' | 'fees' | 'firstCharge' | 'programPaused'>;

export async function quoteOf(deps: PublicDeps, r: PaymentRequirement): Promise<Quote> {
  const [decimals, terms] = await Promise.all([deps.amounts.decimals(r.tokenMint), readFeeTerms(deps.fees, r)]);
  const money = (u: bigint): Money => ({ baseUnits: u.toString(), ui: deps.amounts.formatBaseUnits(u, decimals) });
  const split = terms ? splitFees(r.amount, terms) : undefined;
  const chargedNow = r.scheme === 'deferred' || r.scheme === 'x402://prepaid';
  return {
    payee: { recipient: r.recipient, gateway: r.gateway },
    scheme: r.scheme, network: r.network, tokenMint: r.tokenMint, currency: r.currency, decimals, amount: money(r.amount),
    schedule: scheduleOf(r, money),
    fees: terms && split ? {
      gatewayFeeBps: terms.gatewayFeeBps, protocolShareBps: terms.protocolShareBps, netMode: terms.netMode,
      gatewayFee: money(split.gatewayFee), protocolFee: money(split.protocolFee), recipientReceives: money(split.recipientReceives), payerPays: money(split.payerPays),
    } : null,
    firstCharge: chargedNow ? { amount: money(split?.payerPays ?? r.amount), at: 'on confirmation' } : null,
    programPaused: terms?.programPaused ?? false,
  };
}

export async function publicView(deps: PublicDeps, row: SessionRow, now: Date): Promise<PublicView> {
  const quote = await quoteOf(deps, requirementOf(storedOf(row), deps.requirements));
  const status = statusAt(row, now);
  return {
    id: row.id, status, label: row.label, ...quote, expiresAt: row.expires_at.toISOString(), cancelUrl: row.cancel_url,
    ...(status === 'complete' ? { successUrl: row.success_url } : {}),
  };
}
