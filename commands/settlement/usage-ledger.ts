/**
 * The pay-as-you-go usage ledger in Postgres: one row per admitted request, keyed by its
 * request id, written before the chunk is counted in Redis and so before the response
 * leaves. The settler charges its unsettled rows; a lost Redis counter is rebuilt from
 * them. Rows attached to a charge still in flight count as unsettled here: whether the
 * chain has them in current_period_total is not known yet, and counting twice can only
 * refuse a request, never admit one past the cap.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { UsageLedger } from '../x402/metering.js';

export function createUsageLedger(db: Db): UsageLedger {
  return {
    async record(u) {
      await db.insertInto('payg_usage').values({
        request_id: u.requestId, policy: u.policy, gateway: u.gateway, chunk: u.chunk.toString(), period_start: u.periodStart.toString(),
      }).execute();
    },
    async discard(requestId) {
      await db.deleteFrom('payg_usage').where('request_id', '=', requestId).where('charge_id', 'is', null).execute();
    },
    async unsettled(policy, periodStart, exceptRequestId) {
      const r = await sql<{ total: string | null }>`
        SELECT sum(u.chunk)::text AS total FROM payg_usage u LEFT JOIN payg_charges c ON c.id = u.charge_id
        WHERE u.policy = ${policy} AND u.period_start = ${periodStart.toString()} AND u.request_id <> ${exceptRequestId}
          AND u.unbillable_reason IS NULL AND (u.charge_id IS NULL OR c.status = 'sending')`.execute(db);
      return BigInt(r.rows[0]?.total ?? '0');
    },
  };
}
