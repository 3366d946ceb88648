/**
 * The payer account's answers (/v1/me/..., docs/payers.md): sign-in, the wallet's
 * subscriptions and payments (queries/me), the transactions it is asked to sign and the
 * relay's answer (commands/payer-account). Types only.
 */

/** POST /v1/me/auth/challenge */
export interface PayerChallenge { nonce: string; wallet: string; expiresAt: number }

/** POST /v1/me/auth/verify */
export interface PayerToken { token: string; expiresIn: number }

export interface LastPayment { signature: string; at: number; amount: string; amountDisplay: string | null }

/** One of GET /v1/me/subscriptions's `data` */
export interface PayerSubscription {
  address: string;
  variant: string;
  scheme: string | null;
  /** Active, Paused or Completed */
  status: string;
  gateway: string;
  gatewayName: string | null;
  merchant: string;
  tokenMint: string | null;
  decimals: number | null;
  amount: string | null;
  amountDisplay: string | null;
  frequencySeconds: number | null;
  totalPaid: string;
  totalPaidDisplay: string | null;
  paymentCount: number;
  nextPaymentDue: number | null;
  paidThrough: number | null;
  trackingId: string;
  createdAt: number | null;
  lastPayments: LastPayment[];
}

/** One of GET /v1/me/payments's `data` */
export interface PayerPayment {
  signature: string;
  slot: number;
  at: number;
  policy: string;
  gateway: string;
  merchant: string;
  tokenMint: string | null;
  decimals: number | null;
  amount: string;
  amountDisplay: string | null;
  recordId: number;
  trackingId: string | null;
}

/** GET /v1/me/subscriptions and /v1/me/payments: the list in `data` (payments also say their page). */
export interface PayerList<T> { data: T[]; limit?: number; offset?: number }

export type PolicyAction = 'pause' | 'resume' | 'cancel';

/** POST /v1/me/policies/{address}/{action} and POST /v1/me/delegations/revoke */
export interface UnsignedTransaction {
  /** base64 wire transaction, without signatures: the wallet signs it and sends it to POST /v1/me/transactions */
  transaction: string;
  /** the program's instruction or the token program's, by name */
  instruction: string;
  blockhash: string;
  lastValidBlockHeight: number;
  /** what the wallet is asked to sign, in words */
  summary: string;
}

/** POST /v1/me/transactions */
export interface RelayResult {
  signature: string;
  /** confirmed: landed at the service's commitment; pending: sent, not confirmed within the wait (poll the chain) */
  status: 'confirmed' | 'pending';
  instructions: string[];
}
