/** What the merchant routes answer, as far as the dashboard reads it: the wire module's shapes (types only). */
import type { RecentPayment } from '../../src/kernel/wire/answers/merchant.js';

export type {
  Overview, RevenueAnswer as Revenue, RevenueEntry as Bucket, Subscriber, SubscriberPage, WebhookHealth,
} from '../../src/kernel/wire/answers/merchant.js';

/** A payment as the list shows it: from the overview, or pushed live (whose time may be unknown). */
export type Payment = Pick<RecentPayment, 'signature' | 'amount' | 'payer' | 'trackingId'> & { at: number | null };
