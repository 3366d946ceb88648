/** The shapes of the payer account's API (docs/payers.md), as the page reads them. */

export interface LastPayment { signature: string; at: number; amount: string; amountDisplay: string | null }

export interface Subscription {
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
  lastPayments: LastPayment[];
}

export interface Payment {
  signature: string;
  at: number;
  policy: string;
  gateway: string;
  merchant: string;
  tokenMint: string | null;
  decimals: number | null;
  amount: string;
  amountDisplay: string | null;
}

export interface Challenge { nonce: string; wallet: string; expiresAt: number }

export interface PayerToken { token: string; expiresIn: number }

export interface UnsignedAnswer {
  transaction: string;
  instruction: string;
  blockhash: string;
  lastValidBlockHeight: number;
  summary: string;
}

export interface RelayAnswer { signature: string; status: 'confirmed' | 'pending'; instructions: string[] }

export type PolicyAction = 'pause' | 'resume' | 'cancel';
