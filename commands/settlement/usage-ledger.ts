/**
 * The pay-as-you-go usage ledger in Postgres: one row per admitted request, keyed by its
 * request id, written once Redis counted the chunk and before the response leaves, with
 * the slices of the period's cap and of the account's position it holds (no two rows hold
 * overlapping slices: commands/x402/meter-slices.ts). The settler charges its unsettled
 * rows; a lost Redis counter is rebuilt from the end of the period's highest slice (at
 * least every chunk metered in the period), and a lost account outstanding from the
 * account's rows not charged yet: uncharged, or in a charge still in flight (the account
 * has not paid it yet).
 *
 * A row is written as a reservation (reserved_until): the request is not served yet. It
 * becomes chargeable once served (reserved_until NULL), is deleted when its request ended
 * unanswered, and one a dead process left behind is dropped by the settler once
 * reserved_until has passed (charges.ts): a payer is charged only for requests served.
 */
import pRetry from 'p-retry';
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { UsageLedger } from '../x402/metering.js';
import { sliceText } from '../x402/meter-slices.js';
import { groupedCalls, groupedWrites } from '../../infra/postgres/grouped-writes.js';
import { runPrepared } from '../../infra/postgres/prepared.js';

type Recorded = Parameters<UsageLedger['record']>[0];

/** How long a request may take to be served before its reservation is dropped (and it is never charged). */
export const DEFAULT_RESERVATION_SECONDS = 300;
/**
 * Requests served are marked together, rather than a statement of their own per request on the
 * metered route: a mark waits up to SERVED_BATCH_MS for others, then they go in one UPDATE, on a
 * connection of its own beside the admitted rows' statements (a mark's UPDATE leaves the slices
 * alone, so it takes no lock the rows' statements take, and never holds a row's statement up:
 * the rows are what an answer waits for). A process that dies holding marks leaves those
 * requests served and not charged (their reservations are dropped); a mark whose statement
 * fails is tried again (SERVED_RETRY_SECONDS).
 */
const SERVED_BATCH_MS = 10;
const SERVED_BATCH_MAX = 500;
/**
 * A served mark whose statement failed (a Postgres restart: "terminating connection due to
 * administrator command") is tried again for about this long, well within the reservation's
 * bound; a longer outage leaves the request served and not charged, as a dying process does.
 */
export const SERVED_RETRY_SECONDS = 30;
const SERVED_RETRY = { retries: 10, factor: 2, minTimeout: 200, maxTimeout: 5000, maxRetryTime: SERVED_RETRY_SECONDS * 1000 };
/**
 * Statements of admitted rows in flight at once, and rows in one: the rest queue for the next (a
 * group commit). A statement waits for the end of the event loop's round it was asked in, so the
 * rows of the requests one Redis pipeline's answers resumed go together (grouped-writes.ts,
 * `round`): Postgres's cost is mostly per statement (rows in groups of 3, 10 and 30 cost its
 * backend about 530, 190 and 120 µs of CPU each on the development machine). Two in flight, so a
 * round's rows need not wait for the previous round's commit (the x402 bench: pay-as-you-go 0.60,
 * 0.58, 0.64 of the unprotected route with two, 0.53, 0.59, 0.52 with one; test/bench/README.md).
 */
const RECORD_IN_FLIGHT = 2;
const RECORD_MAX = 200;

/**
 * The admitted rows' statement: one fixed text whatever the group's size (arrays unnested), a
 * prepared statement (infra/postgres/prepared.ts). Rows go in ordered by the owner of their
 * slices, the key the ledger locks them by (migration 1010): concurrent groups lock in one order.
 */
const INSERT_ROWS = {
  name: 'payg_usage_insert_rows',
  text: `INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, reserved_until, period_slice, account_slice)
    SELECT r, p, g, u, c::numeric, s::bigint, now() + make_interval(secs => $9::float8), ps::int8range, acs::int8range
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS t(r, p, g, u, c, s, ps, acs)
    ORDER BY coalesce(u, p)`,
};
/**
 * Served marks: their reservations become chargeable; the ids found come back (a dropped
 * reservation's does not). Planned on each run: a generic plan made while the table was small
 * scanned it whole (240 µs of Postgres a request in the x402 bench, against 100)
 */
const MARK_SERVED = {
  text: 'UPDATE payg_usage SET reserved_until = NULL WHERE request_id = ANY($1::text[]) RETURNING request_id',
};

/** The ledger's hot-path writes: admitted rows (each written before its answer leaves) and served marks, each grouped. */
function hotWrites(db: Db, reservation: number): { record: (row: Recorded) => Promise<void>; served: (id: string) => Promise<boolean> } {
  const record = groupedWrites(async (rows: readonly Recorded[]) => {
    await runPrepared(db, INSERT_ROWS, [
      rows.map((u) => u.requestId), rows.map((u) => u.policy), rows.map((u) => u.gateway), rows.map((u) => u.userPayment),
      rows.map((u) => u.chunk.toString()), rows.map((u) => u.periodStart.toString()),
      rows.map((u) => sliceText(u.periodSliceStart, u.chunk)), rows.map((u) => sliceText(u.accountSliceStart, u.chunk)), reservation,
    ]);
  }, { inFlight: RECORD_IN_FLIGHT, max: RECORD_MAX, round: true });
  // a durable commit: a served request's mark survives a Postgres crash, so it is charged. A failed
  // statement fails every mark in it (a lost connection, not one mark's fault): each is tried again
  const served = groupedCalls(async (ids: readonly string[]) => {
    const found = new Set((await runPrepared<{ request_id: string }>(db, MARK_SERVED, [ids])).map((r) => r.request_id));
    return (id: string) => found.has(id);
  }, { inFlight: 1, max: SERVED_BATCH_MAX, gatherMs: SERVED_BATCH_MS, alone: false });
  return { record, served };
}

export function createUsageLedger(db: Db, opts: { reservationSeconds?: number } = {}): UsageLedger {
  const writes = hotWrites(db, opts.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS);
  return {
    record: writes.record,
    // a mark lost to a Postgres restart would leave a request served and never charged: retried
    // for about SERVED_RETRY_SECONDS (the statement is an UPDATE of the row, so running it twice is harmless)
    served: (requestId) => writes.served(requestId).catch(() => pRetry(() => writes.served(requestId), SERVED_RETRY)),
    async unserved(requestId) {
      const row = await db.deleteFrom('payg_usage').where('request_id', '=', requestId).where('reserved_until', 'is not', null).where('charge_id', 'is', null)
        .returning(['policy', 'period_start', 'user_payment', 'chunk']).executeTakeFirst();
      return row && { policy: row.policy, periodStart: BigInt(row.period_start), userPayment: row.user_payment, chunk: BigInt(row.chunk) };
    },
    async discard(requestId) {
      await db.deleteFrom('payg_usage').where('request_id', '=', requestId).where('charge_id', 'is', null).execute();
    },
    async metered(policy, periodStart, settled) {
      // rows recorded before slices were kept count by their sum; usage of earlier periods not charged
      // yet is charged in this one (the program counts a charge in the period it lands in)
      const r = await sql<{ mark: string; older: string }>`
        SELECT greatest(coalesce(max(upper(period_slice)) FILTER (WHERE period_start = ${periodStart.toString()}), 0),
                        coalesce(sum(chunk) FILTER (WHERE period_start = ${periodStart.toString()}), 0))::text AS mark,
               coalesce(sum(chunk) FILTER (WHERE period_start < ${periodStart.toString()} AND unbillable_reason IS NULL
                 AND (charge_id IS NULL OR charge_id IN (SELECT id FROM payg_charges WHERE policy = ${policy} AND status = 'sending'))), 0)::text AS older
        FROM payg_usage WHERE policy = ${policy} AND period_start <= ${periodStart.toString()}`.execute(db);
      const mark = BigInt(r.rows[0]?.mark ?? '0');
      const carried = settled + BigInt(r.rows[0]?.older ?? '0');
      return mark > carried ? mark : carried;
    },
    async outstanding(userPayment) {
      // the uncharged rows through payg_usage_account_outstanding_idx; those of the few charges in flight through their policies
      const r = await sql<{ owed: string; position: string }>`
        SELECT ((SELECT coalesce(sum(chunk), 0) FROM payg_usage
                 WHERE user_payment = ${userPayment} AND charge_id IS NULL AND unbillable_reason IS NULL)
              + (SELECT coalesce(sum(u.chunk), 0) FROM payg_charges c JOIN payg_usage u ON u.policy = c.policy AND u.charge_id = c.id
                 WHERE c.status = 'sending' AND u.user_payment = ${userPayment} AND u.unbillable_reason IS NULL))::text AS owed,
               (SELECT coalesce(max(upper(account_slice)), 0) FROM payg_usage WHERE user_payment = ${userPayment})::text AS position`.execute(db);
      const row = r.rows[0];
      return { owed: BigInt(row?.owed ?? '0'), position: BigInt(row?.position ?? '0') };
    },
  };
}
