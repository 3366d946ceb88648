/**
 * The pay-as-you-go usage ledger in Postgres: one row per admitted request, keyed by its
 * request id, written before the chunk is counted in Redis and so before the response
 * leaves. The settler charges its unsettled rows; a lost Redis counter is rebuilt from
 * every row of the period, charged or not (metering.ts: the counter is all that was
 * metered in the period), and a lost account outstanding from the account's rows not
 * charged yet: uncharged, or in a charge still in flight (the account has not paid it yet).
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { UsageLedger } from '../x402/metering.js';

export function createUsageLedger(db: Db): UsageLedger {
  return {
    async record(u) {
      await db.insertInto('payg_usage').values({
        request_id: u.requestId, policy: u.policy, gateway: u.gateway, user_payment: u.userPayment, chunk: u.chunk.toString(), period_start: u.periodStart.toString(),
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
    async outstanding(userPayment, exceptRequestId) {
      // the uncharged rows through payg_usage_account_outstanding_idx; those of the few charges in flight through their policies
      const r = await sql<{ total: string | null }>`
        SELECT ((SELECT coalesce(sum(chunk), 0) FROM payg_usage
                 WHERE user_payment = ${userPayment} AND charge_id IS NULL AND unbillable_reason IS NULL AND request_id <> ${exceptRequestId})
              + (SELECT coalesce(sum(u.chunk), 0) FROM payg_charges c JOIN payg_usage u ON u.policy = c.policy AND u.charge_id = c.id
                 WHERE c.status = 'sending' AND u.user_payment = ${userPayment} AND u.unbillable_reason IS NULL))::text AS total`.execute(db);
      return BigInt(r.rows[0]?.total ?? '0');
    },
  };
}
