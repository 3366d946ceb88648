import type { ColumnType } from 'kysely';

export interface PaymentStatsDailyTable {
  gateway: string;
  /** days since 1970-01-01 UTC of the payment's time (block time, else the program's clock) */
  day: ColumnType<string, string | number, string | number>;
  payments: ColumnType<string, string | number, string | number>;
  /** exact sum of amounts, base units */
  volume: ColumnType<string, string | number, string | number>;
}

export interface StatsTables {
  payment_stats_daily: PaymentStatsDailyTable;
}
