/**
 * The merchant dashboard's answers (GET /v1/gateway/{gateway}/merchant/...), each in the
 * success envelope: revenue, subscribers, overview (queries/merchant). Types only.
 */

/** One bucket of a revenue series; amounts are base units as decimal strings. */
export interface RevenueEntry {
  /** unix seconds of the bucket's start, UTC */
  start: number;
  gross: string;
  gatewayFee: string;
  protocolFee: string;
  net: string;
  payments: number;
  newSubscriptions: number;
  endedSubscriptions: number;
  /** base units per month, up to six decimals */
  mrr: string;
}

export interface RevenueSeries { tokenMint: string; buckets: RevenueEntry[] }

/** GET .../merchant/revenue */
export interface RevenueAnswer {
  /** day, week or month */
  bucket: string;
  from: number;
  to: number;
  series: RevenueSeries[];
}

export interface Subscriber {
  payer: string;
  tokenMint: string;
  status: string;
  policies: string[];
  activePolicies: number;
  /** base units, decimal string: what the payer paid in all, fees included */
  totalPaid: string;
  payments: number;
  /** unix seconds, or null */
  firstPaymentAt: number | null;
  lastPaymentAt: number | null;
  nextDue: number | null;
  /** one of its policies is past due for the scheduler (a renewal failed and is retried) */
  pastDue: boolean;
}

/** GET .../merchant/subscribers */
export interface SubscriberPage { items: Subscriber[]; total: number }

export interface RecentPayment { signature: string; at: number; payer: string | null; tokenMint: string | null; amount: string; policy: string; trackingId: string | null }
export interface Renewal { policy: string; payer: string | null; tokenMint: string | null; nextDue: number; mrr: string }
export interface WebhookHealth {
  id: number;
  endpointUrl: string;
  active: boolean;
  delivered: number;
  pending: number;
  dead: number;
  lastStatus: number | null;
  lastError: string | null;
  /** ISO 8601, or null before the first attempt */
  lastAttemptAt: string | null;
}

/** GET .../merchant/overview */
export interface Overview {
  mrr: { tokenMint: string; mrr: string }[];
  recentPayments: RecentPayment[];
  upcomingRenewals: Renewal[];
  webhooks: WebhookHealth[];
}
