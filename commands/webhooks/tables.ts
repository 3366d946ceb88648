import type { ColumnType, Generated } from 'kysely';

export interface WebhooksTable {
  id: Generated<number>;
  /** as registered: the gateway account or its authority (SPEC: "gateway authority public key") */
  gateway_pubkey: string;
  /** PDA("gateway", gateway_pubkey): the account a webhook registered under an authority stands for */
  gateway_account: string;
  endpoint_url: string;
  active: Generated<boolean>;
  /** the signing secret, sealed (infra/crypto/secret-box.ts) */
  secret: string;
  /** the event types delivered; NULL = all (the outbox trigger drops the others) */
  event_types: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** one delivery at a time, in outbox order */
  ordered: Generated<boolean>;
  rate_limit_per_second: ColumnType<number | null, number | null | undefined, number | null>;
  /** a receiver's Retry-After: no attempt before this (database clock) */
  paused_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** the secret rotated out, sealed like `secret`; signs too until previous_secret_until */
  previous_secret: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** the current streak of failed attempts (no success since), application clock */
  failing_since: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_failure_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  failure_count: Generated<number>;
  created_at: ColumnType<Date, Date, never>;
  updated_at: ColumnType<Date, Date, Date>;
}

export interface WebhooksTables {
  webhooks: WebhooksTable;
}
