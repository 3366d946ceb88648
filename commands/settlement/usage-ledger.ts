/**
 * The pay-as-you-go usage ledger in Postgres: one row per admitted request, keyed by its
 * request id, written before the chunk is counted in Redis and so before the response
 * leaves. The settler charges its unsettled rows; a lost Redis counter is rebuilt from
 * every row of the period, charged or not (metering.ts: the counter is all that was
 * metered in the period).
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
    async metered(policy, periodStart, exceptRequestId) {
      const r = await sql<{ total: string | null }>`
        SELECT sum(chunk)::text AS total FROM payg_usage
        WHERE policy = ${policy} AND period_start = ${periodStart.toString()} AND request_id <> ${exceptRequestId}`.execute(db);
      return BigInt(r.rows[0]?.total ?? '0');
    },
  };
}
