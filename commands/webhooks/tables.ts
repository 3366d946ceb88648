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
  created_at: ColumnType<Date, Date, never>;
  updated_at: ColumnType<Date, Date, Date>;
}

export interface WebhooksTables {
  webhooks: WebhooksTable;
}
