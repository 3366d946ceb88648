import type { ColumnType } from 'kysely';

export type CheckoutStatus = 'open' | 'paying' | 'complete' | 'expired';

export interface CheckoutSessionsTable {
  /** cs_ + 24 url-safe random characters: the page's capability */
  id: string;
  gateway: string;
  status: ColumnType<CheckoutStatus, CheckoutStatus | undefined, CheckoutStatus>;
  /** the stored accepts entry (requirement.ts): amounts as base-unit strings */
  requirement: ColumnType<unknown, string, string>;
  tracking_id: string;
  label: string | null;
  success_url: string;
  cancel_url: string;
  expires_at: ColumnType<Date, Date, Date>;
  created_at: ColumnType<Date, Date | undefined, Date>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  completed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  payer: string | null;
  policy: string | null;
  transaction: string | null;
}

export interface CheckoutTables {
  checkout_sessions: CheckoutSessionsTable;
}
