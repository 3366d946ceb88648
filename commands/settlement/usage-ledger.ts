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
 * becomes chargeable once served (its process's served mark covers it: served-marks.ts), is
 * deleted when its request ended unanswered, and one a dead process left behind is dropped by
 * the settler once reserved_until has passed (charges.ts): a payer is charged only for
 * requests served.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { UsageLedger } from '../x402/metering.js';
import { overlapOf, sliceText } from '../x402/meter-slices.js';
import { groupedWrites } from '../../infra/postgres/grouped-writes.js';
import { backendsDone, backendsInDoubt, columnOf, runPrepared } from '../../infra/postgres/prepared.js';
import { createServedMarks, type ServedMarks } from './served-marks.js';
import { createMeterAhead } from '../x402/meter-pool.js';
import type { Logger } from '../../infra/log/logger.js';

type Recorded = Parameters<UsageLedger['record']>[0];

/** How long a request may take to be served before its reservation is dropped (and it is never charged). */
export const DEFAULT_RESERVATION_SECONDS = 300;
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
  text: `INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, reserved_until, period_slice, account_slice, served_by, served_seq, account_limit)
    SELECT r, p, g, u, c::numeric, s::bigint, now() + make_interval(secs => $9::float8), ps::int8range, acs::int8range, $10::bigint, q::bigint, al::numeric
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $11::text[], $12::text[]) AS t(r, p, g, u, c, s, ps, acs, q, al)
    ORDER BY coalesce(u, p)`,
};

/** The admitted rows' writes, grouped, each numbered by the process's served marks (written before its answer leaves). */
function recordRows(db: Db, reservation: number, marks: ServedMarks): (row: Recorded) => Promise<void> {
  const insert = groupedWrites(async (rows: readonly (Recorded & { seq: number })[]) => {
    const col = columnOf(rows);
    await runPrepared(db, INSERT_ROWS, [
      col((u) => u.requestId), col((u) => u.policy), col((u) => u.gateway), col((u) => u.userPayment),
      col((u) => u.chunk.toString()), col((u) => u.periodStart.toString()),
      col((u) => sliceText(u.periodSliceStart, u.chunk)), col((u) => sliceText(u.accountSliceStart, u.chunk)), reservation,
      marks.node, col((u) => String(u.seq)), col((u) => u.accountLimit?.toString() ?? null),
    ]);
  }, { inFlight: RECORD_IN_FLIGHT, max: RECORD_MAX, round: true });
  return async (row) => {
    const seq = marks.open(row.requestId, row.ahead === true);
    try {
      await insert({ ...row, seq });
    } catch (err) {
      // refused (an overlap): not written, its number closes. Any other failure may have written it:
      // the number stays open until the caller's take-back (discard) deletes the row
      if (overlapOf(err)) marks.notWritten(seq);
      throw err;
    }
  };
}

/** `ahead`: the most rows a busy counter has recorded ahead (meter-pool.ts; 0 or absent: none). */
export function createUsageLedger(db: Db, opts: { reservationSeconds?: number; ahead?: number; logger?: Logger } = {}): UsageLedger {
  const reservation = opts.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS;
  const deleteRow = (requestId: string) => db.deleteFrom('payg_usage').where('request_id', '=', requestId).where('charge_id', 'is', null).execute();
  const marks = createServedMarks(db, { reservationSeconds: reservation, deleteRow });
  const ledger: UsageLedger = {
    record: recordRows(db, reservation, marks),
    // durable once the process's mark covering it has committed (served-marks.ts); a Postgres restart meanwhile
    // only delays it: the mark is written again until it is
    served: (requestId) => marks.served(requestId),
    flush: () => marks.flush(),
    unserved: (requestId) => marks.removed(requestId, async () => {
      const row = await db.deleteFrom('payg_usage').where('request_id', '=', requestId).where('reserved_until', 'is not', null).where('charge_id', 'is', null)
        .returning(['policy', 'period_start', 'user_payment', 'chunk', sql<string | null>`upper(period_slice)::text`.as('slice_end')]).executeTakeFirst();
      return row && {
        policy: row.policy, periodStart: BigInt(row.period_start), userPayment: row.user_payment, chunk: BigInt(row.chunk),
        periodSliceEnd: row.slice_end === null ? null : BigInt(row.slice_end),
      };
    }),
    async discard(requestId, cause) {
      // a write whose answer was lost may still commit: its statement is waited for before the row is deleted,
      // and the row's number stays uncovered until then, so that it is never charged (prepared.ts, backendsDone)
      const pids = backendsInDoubt(cause);
      await marks.removed(requestId, async () => { await backendsDone(db, pids); await deleteRow(requestId); });
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
  if (opts.ahead) {
    const logger = opts.logger;
    return { ...ledger, ahead: createMeterAhead({ max: opts.ahead, reservationSeconds: reservation, ...(logger ? { onError: (err) => logger.warn({ err: (err as Error).message }, 'pay-as-you-go rows recorded ahead: a block failed or was not all given back (a row left is dropped at its bound, never charged)') } : {}) }) };
  }
  return ledger;
}
