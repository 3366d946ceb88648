/** What the merchant routes answer, as far as the dashboard reads it. */
export interface Bucket {
  start: number;
  gross: string;
  gatewayFee: string;
  protocolFee: string;
  net: string;
  payments: number;
  newSubscriptions: number;
  endedSubscriptions: number;
  mrr: string;
}

export interface Revenue { series: { tokenMint: string; buckets: Bucket[] }[] }

export interface Subscriber {
  payer: string;
  tokenMint: string;
  status: string;
  activePolicies: number;
  policies: string[];
  totalPaid: string;
  payments: number;
  lastPaymentAt: number | null;
  nextDue: number | null;
  pastDue: boolean;
}

export interface SubscriberPage { items: Subscriber[]; total: number }

export interface Payment { signature: string; amount: string; payer: string | null; trackingId: string | null; at: number | null }

export interface WebhookHealth {
  endpointUrl: string;
  active: boolean;
  delivered: number;
  pending: number;
  dead: number;
  lastAttemptAt: string | null;
  lastStatus: string | number | null;
  lastError: string | null;
}

export interface Overview {
  recentPayments: Payment[];
  upcomingRenewals: { policy: string; nextDue: number | null }[];
  webhooks: WebhookHealth[];
}
