/**
 * GET /v1/me/subscriptions: every payment policy of the wallet (owner), across gateways
 * and mints, newest first, from the policies read model (its owner index), with its
 * gateway's name, the mint's decimals and its last payments.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { NormalizedPolicy } from '../../src/kernel/domain/policy.js';
import type { PayerSubscription } from '../../src/kernel/wire/answers/payer.js';
import { display, type DecimalsOf } from './decimals.js';

/** the most policies one wallet's list answers */
export const MAX_SUBSCRIPTIONS = 500;
const LAST_PAYMENTS = 3;

/** The x402 scheme that creates a policy of the variant (commands/x402/schemes); null for those made otherwise. */
const SCHEME_OF: Record<string, string> = { Subscription: 'deferred', PayAsYouGo: 'x402://payg', UpTo: 'x402://upto', OneTime: 'x402://prepaid' };

/** The amount a policy charges at most at once, by variant: a period's, a cap, a credit. */
const AMOUNT_KEYS = ['amount', 'maxAmountPerPeriod', 'maxAmount', 'escrowAmount'] as const;

// the answer's shape is the wire module's, which the account page reads as well
export type { LastPayment, PayerSubscription } from '../../src/kernel/wire/answers/payer.js';

interface Row { doc: string; gateway_name: string | null }
interface PaymentRow { policy: string; signature: string; at: string; amount: string }

const num = (v: unknown): number | null => (typeof v === 'string' || typeof v === 'number') && v !== '' && Number.isFinite(Number(v)) ? Number(v) : null;

export async function listSubscriptions(db: Db, decimalsOf: DecimalsOf, wallet: string): Promise<PayerSubscription[]> {
  const rows = (await sql<Row>`
    SELECT p.doc, g.name AS gateway_name FROM payment_policies p LEFT JOIN gateways g ON g.address = p.gateway
    WHERE p.owner = ${wallet} AND NOT p.deleted AND p.doc IS NOT NULL
    ORDER BY p.created_slot DESC, p.address DESC LIMIT ${MAX_SUBSCRIPTIONS}`.execute(db)).rows;
  const policies = rows.map((r) => ({ p: JSON.parse(r.doc) as NormalizedPolicy, gatewayName: r.gateway_name }));
  const payments = policies.length === 0 ? [] : (await sql<PaymentRow>`
    SELECT policy, signature, at::text AS at, amount::text AS amount FROM (
      SELECT policy, signature, at, amount, row_number() OVER (PARTITION BY policy ORDER BY slot DESC, record_id DESC) AS n
      FROM payments WHERE policy = ANY(${policies.map((x) => x.p.address)}::text[]) AND kind = 'PaymentRecord') t
    WHERE n <= ${LAST_PAYMENTS} ORDER BY policy, at DESC`.execute(db)).rows;
  const out: PayerSubscription[] = [];
  for (const { p, gatewayName } of policies) {
    const decimals = await decimalsOf(p.tokenMint);
    const found = AMOUNT_KEYS.map((k) => p.parameters[k]).find((v) => typeof v === 'string');
    const amount = typeof found === 'string' ? found : null;
    const frequencySeconds = num(p.parameters['frequencySeconds']);
    const due = num(p.parameters['nextPaymentDue']);
    out.push({
      address: p.address, variant: p.variant, scheme: SCHEME_OF[p.variant] ?? null, status: p.status,
      gateway: p.gateway, gatewayName, merchant: p.recipient, tokenMint: p.tokenMint, decimals: decimals ?? null,
      amount, amountDisplay: display(amount, decimals), frequencySeconds,
      totalPaid: p.totalPaid, totalPaidDisplay: display(p.totalPaid, decimals), paymentCount: p.paymentCount,
      // a paused policy is not charged: nothing is due until it is resumed (docs/payers.md)
      nextPaymentDue: p.status === 'Paused' ? null : p.nextPaymentDue,
      // a subscription's period runs to its next due date: what was paid covers it
      paidThrough: p.variant === 'Subscription' && p.paymentCount > 0 ? due : null,
      trackingId: p.trackingId, createdAt: p.createdAt,
      lastPayments: payments.filter((x) => x.policy === p.address)
        .map((x) => ({ signature: x.signature, at: Number(x.at), amount: x.amount, amountDisplay: display(x.amount, decimals) })),
    });
  }
  return out;
}
