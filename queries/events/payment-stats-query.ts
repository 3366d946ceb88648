/**
 * Aggregates of PaymentRecord events for /v1/events/payments/stats: answered by the
 * payment stats read model (projections/stats), which keeps count and exact volume per
 * gateway per day and reads the partial days at a range's edges from the payments model.
 */
import type { Db } from '../../infra/postgres/database.js';
import { paymentStats as statsFromModel, type PaymentStats } from '../../projections/stats/query.js';
import type { TimeRange } from './params.js';

export type { PaymentStats };

export interface PaymentStatsFilter {
  gateway?: string;
  time: TimeRange;
}

export function paymentStats(db: Db, f: PaymentStatsFilter): Promise<PaymentStats> {
  return statsFromModel(db, {
    ...(f.gateway !== undefined ? { gateway: f.gateway } : {}),
    ...(f.time.from !== undefined ? { startTime: f.time.from } : {}),
    ...(f.time.to !== undefined ? { endTime: f.time.to } : {}),
  });
}
