/**
 * The dashboard's side panels in one read: the latest payments (payments model), the
 * renewals due next (merchant policies), the MRR now per mint, and the health of the
 * gateway's webhooks (registrations and their outbox over the last 24 hours). Webhook
 * health is raw SQL over the webhook tables so that a change of their typed shape in
 * another area does not ripple here; a failure of that part leaves it empty.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { microToDecimal } from '../../src/kernel/domain/mrr.js';
import type { Overview, WebhookHealth } from '../../src/kernel/wire/answers/merchant.js';

// the answer's shape is the wire module's, which the dashboard page reads as well
export type { Overview, RecentPayment, Renewal, WebhookHealth } from '../../src/kernel/wire/answers/merchant.js';

export async function overview(db: Db, gateway: string, nowSeconds: number, limit = 20): Promise<Overview> {
  const [mrr, recent, renewals, webhooks] = await Promise.all([
    db.selectFrom('merchant_mrr').selectAll().where('gateway', '=', gateway).orderBy('token_mint').execute(),
    db.selectFrom('payments').select(['signature', 'at', 'payer', 'token_mint', 'amount', 'policy', 'tracking_id'])
      .where('gateway', '=', gateway).where('kind', '=', 'PaymentRecord').orderBy('at', 'desc').orderBy('event_id', 'desc').limit(limit).execute(),
    db.selectFrom('merchant_policies').select(['address', 'payer', 'token_mint', 'next_due', 'monthly_micro', 'counted'])
      .where('gateway', '=', gateway).where('status', '=', 'Active').where('deleted', '=', false)
      .where('next_due', '>=', String(nowSeconds - 86_400)).orderBy('next_due').limit(limit).execute(),
    webhookHealth(db, gateway).catch(() => []),
  ]);
  return {
    mrr: mrr.map((r) => ({ tokenMint: r.token_mint, mrr: microToDecimal(BigInt(r.mrr_micro)) })),
    recentPayments: recent.map((r) => ({ signature: r.signature, at: Number(r.at), payer: r.payer, tokenMint: r.token_mint, amount: r.amount, policy: r.policy, trackingId: r.tracking_id })),
    upcomingRenewals: renewals.map((r) => ({ policy: r.address, payer: r.payer, tokenMint: r.token_mint, nextDue: Number(r.next_due), mrr: r.counted ? microToDecimal(BigInt(r.monthly_micro)) : '0' })),
    webhooks,
  };
}

async function webhookHealth(db: Db, gateway: string): Promise<WebhookHealth[]> {
  const { rows } = await sql<{ id: number; endpoint_url: string; active: boolean; delivered: string; pending: string; dead: string; last_status: number | null; last_error: string | null; last_at: Date | null }>`
    SELECT w.id, w.endpoint_url, w.active,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'delivered' AND d.created_at > now() - interval '24 hours') AS delivered,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending') AS pending,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'dead' AND d.created_at > now() - interval '24 hours') AS dead,
      a.status_code AS last_status, a.error AS last_error, a.attempted_at AS last_at
    FROM webhooks w
    LEFT JOIN LATERAL (SELECT status_code, error, attempted_at FROM webhook_attempts t WHERE t.webhook_id = w.id ORDER BY t.id DESC LIMIT 1) a ON true
    WHERE w.gateway_account = ${gateway} OR w.gateway_pubkey = ${gateway}
    ORDER BY w.id`.execute(db);
  return rows.map((r) => ({
    id: r.id, endpointUrl: r.endpoint_url, active: r.active, delivered: Number(r.delivered), pending: Number(r.pending), dead: Number(r.dead),
    lastStatus: r.last_status, lastError: r.last_error, lastAttemptAt: r.last_at ? new Date(r.last_at).toISOString() : null,
  }));
}
