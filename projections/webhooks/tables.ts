import type { ColumnType, Generated } from 'kysely';

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

type Time = ColumnType<Date, Date | string | undefined, Date | string>;
type OptionalTime = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** The outbox: one row per (event, webhook). */
export interface WebhookDeliveriesTable {
  id: Generated<string>;
  webhook_id: number;
  event_id: string;
  event_name: string;
  /** the event as the events API returns it; NULL: its event's, in webhook_events */
  payload: ColumnType<unknown, string | null | undefined, string | null>;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  round: Generated<number>;
  attempts: Generated<number>;
  next_attempt_at: Time;
  locked_until: OptionalTime;
  locked_by: string | null;
  last_error: string | null;
  created_at: Time;
  finished_at: OptionalTime;
}

/** A chain event's payload, stored once however many webhooks it goes to (migration 0994). */
export interface WebhookEventsTable {
  event_id: string;
  payload: ColumnType<unknown, string, string>;
  /** the webhooks it was queued for: retention looks for rows left through (webhook_id, event_id) */
  webhook_ids: number[];
  created_at: Time;
}

/**
 * A pushed event's first attempts, one row for all its webhooks (migration 0996): the
 * outbox rows are written as their outcomes are known (commands/webhooks/delivery/fanouts.ts).
 */
export interface WebhookFanoutsTable {
  id: Generated<string>;
  event_id: string;
  event_name: string;
  webhook_ids: number[];
  created_at: Time;
  lease_until: Time;
}

export interface WebhookAttemptsTable {
  id: Generated<string>;
  delivery_id: string;
  webhook_id: number;
  event_id: string;
  event_name: string;
  /** 1-based, across the delivery's whole life */
  attempt: number;
  attempted_at: ColumnType<Date, Date | string, never>;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  success: boolean;
}

export interface WebhookPolicyGatewaysTable {
  policy: string;
  gateway: string;
}

export interface WebhookOutboxTables {
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_events: WebhookEventsTable;
  webhook_fanouts: WebhookFanoutsTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_policy_gateways: WebhookPolicyGatewaysTable;
}
