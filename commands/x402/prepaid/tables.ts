import type { ColumnType } from 'kysely';

/** A paid x402://prepaid credit: its OneTime policy executed, the money with the recipient. */
export interface PrepaidCreditsTable {
  policy: string;
  payer: string;
  gateway: string;
  /** the requirement the credit was bought under (its id hashes the terms) */
  requirement_id: string;
  /** smallest units; numeric, read as a decimal string */
  credit: ColumnType<string, string, string>;
  /** the Payment transaction's signature, when this service sent it */
  transaction: string | null;
  paid_at: ColumnType<Date, Date | undefined, never>;
  /** created_at (unix s) of the policy at this address whose payment the row counted last; null: recorded before it was kept */
  policy_created_at: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One payment of a credit: a policy at the credit's address (its created_at), paid once. */
export interface PrepaidCreditPaymentsTable {
  policy: string;
  policy_created_at: ColumnType<string | null, string | null | undefined, string | null>;
  gateway: string;
  requirement_id: string;
  amount: ColumnType<string, string, string>;
  transaction: string | null;
  paid_at: ColumnType<Date, Date | undefined, never>;
}

/** One admitted request's cost, drawn from a credit. */
export interface PrepaidUsageTable {
  request_id: string;
  policy: string;
  gateway: string;
  amount: ColumnType<string, string, string>;
  used_at: ColumnType<Date, Date | undefined, never>;
  /** the slice of the credit the request holds (commands/x402/meter-slices.ts); null before slices were kept */
  slice: ColumnType<string | null, string | null | undefined, never>;
  /** a row recorded ahead (migration 1022): a reservation until its process's served mark covers it; null: drawn */
  reserved_until: ColumnType<Date | null, Date | null | undefined, never>;
  served_by: ColumnType<string | null, string | null | undefined, never>;
  served_seq: ColumnType<string | null, string | null | undefined, never>;
}

export interface PrepaidTables {
  prepaid_credits: PrepaidCreditsTable;
  prepaid_credit_payments: PrepaidCreditPaymentsTable;
  prepaid_usage: PrepaidUsageTable;
}
