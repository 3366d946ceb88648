/**
 * Payment stats per gateway per UTC day: count and exact volume of PaymentRecord amounts
 * (numeric, never a double). Addition commutes, so a batch is summed in memory and
 * written as one upsert per (gateway, day) it touches.
 */
import { sql } from 'kysely';
import { epochDay, paymentAt } from '../../src/kernel/domain/event-data.js';
import type { Projection } from '../runner/projection.js';
import { bulkInsert } from '../runner/bulk.js';
import { readScope } from '../../src/kernel/names/read-scopes.js';

const COLUMNS: readonly string[] = [
  'gateway', 'day', 'payments', 'volume',
];

export const statsProjection: Projection = {
  name: 'payment-stats',
  // apply upserts by (gateway, day), never reads by day alone
  tables: [{ name: 'payment_stats_daily', orderBy: 'gateway, day', deferredIndexes: ['payment_stats_daily_day_idx'] }],
  replayable: true,
  async apply(trx, events) {
    const sums = new Map<string, { gateway: string; day: string; payments: number; volume: bigint }>();
    for (const e of events) {
      if (e.name !== 'PaymentRecord') continue;
      const gateway = e.data.gateway;
      const day = epochDay(paymentAt(e)).toString();
      const key = `${gateway}|${day}`;
      const s = sums.get(key) ?? { gateway, day, payments: 0, volume: 0n };
      s.payments += 1;
      s.volume += BigInt(e.data.amount);
      sums.set(key, s);
    }
    const rows = [...sums.values()].map((s) => ({ gateway: s.gateway, day: s.day, payments: s.payments, volume: s.volume.toString() }));
    await bulkInsert(trx, 'payment_stats_daily', COLUMNS, rows, sql`
      ON CONFLICT (gateway, day) DO UPDATE SET
        payments = payment_stats_daily.payments + EXCLUDED.payments,
        volume = payment_stats_daily.volume + EXCLUDED.volume`);
    return new Set(rows.map((r) => readScope.gateway(r.gateway)));
  },
};
