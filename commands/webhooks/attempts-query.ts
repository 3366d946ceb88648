/** SQL of GET /v1/webhooks/{id}/deliveries: a webhook's delivery attempts, newest first. */
import type { Db } from '../../infra/postgres/database.js';
import type { DeliveryStatus } from '../../projections/webhooks/tables.js';
import type { Page } from './store.js';

export interface AttemptRow {
  id: string;
  delivery_id: string;
  event_id: string;
  event_name: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  success: boolean;
  delivery_status: DeliveryStatus;
  next_attempt_at: Date;
}

export async function listAttempts(db: Db, webhookId: number, page: Page): Promise<AttemptRow[]> {
  return db.selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select([
      'a.id', 'a.delivery_id', 'a.event_id', 'a.event_name', 'a.attempt', 'a.attempted_at', 'a.status_code',
      'a.latency_ms', 'a.error', 'a.success', 'd.status as delivery_status', 'd.next_attempt_at',
    ])
    .where('a.webhook_id', '=', webhookId)
    .orderBy('a.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}
