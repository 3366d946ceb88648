/**
 * The hosted checkout's answers (/v1/checkout/sessions/{id}/..., bare, without the
 * envelope): the payer's view of a session, the transaction to sign and the payment's
 * outcome (commands/checkout). Types only.
 */

/** An amount in the mint's base units, and as the service writes it with the mint's decimals. */
export interface Money { baseUnits: string; ui: string }

export interface Schedule {
  /** deferred: each period; payg: per use, up to a cap per period; upto: once, up to a maximum; prepaid: once, a credit */
  kind: 'subscription' | 'pay-as-you-go' | 'up-to' | 'prepaid';
  paymentFrequency?: string;
  periodSeconds?: number;
  autoRenew?: boolean;
  maxRenewals?: number | null;
  maxAmountPerPeriod?: Money;
  maxChunkAmount?: Money;
  maxTimeoutSeconds?: number;
  pricePerRequest?: Money;
}

export interface Fees {
  gatewayFeeBps: number;
  protocolShareBps: number;
  netMode: boolean;
  gatewayFee: Money;
  protocolFee: Money;
  recipientReceives: Money;
  payerPays: Money;
}

export type SessionStatus = 'open' | 'complete' | 'expired';

/** GET /v1/checkout/sessions/{id}/public */
export interface PublicView {
  id: string;
  status: SessionStatus;
  label: string | null;
  payee: { recipient: string; gateway: string };
  scheme: string;
  network: string;
  tokenMint: string;
  currency: string;
  decimals: number;
  amount: Money;
  schedule: Schedule;
  fees: Fees | null;
  /** what leaves the wallet when the transaction confirms, or null when nothing is charged then (payg, upto) */
  firstCharge: { amount: Money; at: 'on confirmation' } | null;
  programPaused: boolean;
  expiresAt: string;
  cancelUrl: string;
  /** only once the session is complete */
  successUrl?: string;
}

/** The message the payer signs: `${prefix}|${requirementId}|${resource}|<signature>|${signedAt}`. */
export interface ProofParts { prefix: string; requirementId: string; resource: string; signedAt: number; windowSeconds: number; template: string }

/** POST /v1/checkout/sessions/{id}/transaction */
export interface CheckoutTransaction {
  transaction: string;
  payer: string;
  policy: string;
  proof: ProofParts;
  lastValidBlockHeight: number;
}

/** POST /v1/checkout/sessions/{id}/pay */
export interface PayAnswer { status: 'complete'; policy: string; transaction: string | null; payer: string; redirectUrl: string }
