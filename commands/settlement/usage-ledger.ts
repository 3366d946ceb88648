/**
 * The pay-as-you-go usage ledger in Postgres: one row per admitted request, keyed by its
 * request id, written before the chunk is counted in Redis and so before the response
 * leaves. The settler charges its unsettled rows; a lost Redis counter is rebuilt from
 * every row of the period, charged or not (metering.ts: the counter is all that was
 * metered in the period), and a lost account outstanding from the account's rows not
 * charged yet: uncharged, or in a charge still in flight (the account has not paid it yet).
 *
 * A row is written as a reservation (reserved_until): the request is not served yet. It
 * becomes chargeable once served (reserved_until NULL), is deleted when its request ended
 * unanswered, and one a dead process left behind is dropped by the settler once
 * reserved_until has passed (charges.ts): a payer is charged only for requests served.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { UsageLedger } from '../x402/metering.js';

/** How long a request may take to be served before its reservation is dropped (and it is never charged). */
export const DEFAULT_RESERVATION_SECONDS = 300;

export function createUsageLedger(db: Db, opts: { reservationSeconds?: number } = {}): UsageLedger {
  const reservation = opts.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS;
  return {
    async record(u) {
      await db.insertInto('payg_usage').values({
        request_id: u.requestId, policy: u.policy, gateway: u.gateway, user_payment: u.userPayment, chunk: u.chunk.toString(), period_start: u.periodStart.toString(),
        reserved_until: sql<Date>`now() + make_interval(secs => ${reservation})`,
      }).execute();
    },
    async served(requestId) {
      const r = await db.updateTable('payg_usage').set({ reserved_until: null }).where('request_id', '=', requestId).executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },
    async unserved(requestId) {
      const row = await db.deleteFrom('payg_usage').where('request_id', '=', requestId).where('reserved_until', 'is not', null).where('charge_id', 'is', null)
        .returning(['policy', 'period_start', 'user_payment', 'chunk']).executeTakeFirst();
      return row && { policy: row.policy, periodStart: BigInt(row.period_start), userPayment: row.user_payment, chunk: BigInt(row.chunk) };
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
