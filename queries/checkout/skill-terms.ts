/**
 * A hosted checkout session's terms as the skill document reads them (GET /v1/skill/cs_…):
 * the row's stored requirement (commands/checkout writes it: amounts in base units), its
 * URLs, trackingId and status. Only a subscription (scheme deferred) has a skill document.
 */
import type { Db } from '../../infra/postgres/database.js';

export const HOSTED_SESSION_ID = /^cs_[A-Za-z0-9_-]{24}$/;

export interface HostedTerms {
  id: string;
  scheme: string;
  tokenMint: string;
  recipient: string;
  gateway: string;
  /** base units, a decimal string */
  amount: string;
  paymentFrequency: string | undefined;
  autoRenew: boolean | undefined;
  maxRenewals: number | null | undefined;
  memo: string | undefined;
  trackingId: string;
  successUrl: string;
  cancelUrl: string;
  /** open, complete or expired (an open session past its expiry) */
  status: 'open' | 'complete' | 'expired';
  expiresAt: string;
}

interface StoredInput {
  scheme?: unknown; tokenMint?: unknown; recipient?: unknown; gateway?: unknown; amount?: unknown;
  paymentFrequency?: unknown; autoRenew?: unknown; maxRenewals?: unknown; memo?: unknown;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export async function hostedTerms(db: Db, id: string, nowMs: number): Promise<HostedTerms | undefined> {
  if (!HOSTED_SESSION_ID.test(id)) return undefined;
  const row = await db.selectFrom('checkout_sessions')
    .select(['id', 'status', 'requirement', 'tracking_id', 'success_url', 'cancel_url', 'expires_at'])
    .where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const input = ((row.requirement as { input?: StoredInput } | null)?.input ?? {});
  const done = row.status === 'complete' || row.status === 'expired';
  return {
    id: row.id, scheme: text(input.scheme) ?? '', tokenMint: text(input.tokenMint) ?? '', recipient: text(input.recipient) ?? '',
    gateway: text(input.gateway) ?? '', amount: typeof input.amount === 'string' || typeof input.amount === 'number' ? String(input.amount) : '', paymentFrequency: text(input.paymentFrequency),
    autoRenew: typeof input.autoRenew === 'boolean' ? input.autoRenew : undefined,
    maxRenewals: typeof input.maxRenewals === 'number' || input.maxRenewals === null ? input.maxRenewals : undefined,
    memo: text(input.memo), trackingId: row.tracking_id, successUrl: row.success_url, cancelUrl: row.cancel_url,
    status: done ? (row.status as 'complete' | 'expired') : row.expires_at.getTime() <= nowMs ? 'expired' : 'open',
    expiresAt: row.expires_at.toISOString(),
  };
}
