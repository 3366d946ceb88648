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

type Recorded = Parameters<UsageLedger['record']>[0];

/** How long a request may take to be served before its reservation is dropped (and it is never charged). */
export const DEFAULT_RESERVATION_SECONDS = 300;
/**
 * Requests served are marked together, rather than a statement of their own per request on the
 * metered route: the marks ride in the next statement that writes admitted rows (one round trip
 * and one commit for both), and go alone once the oldest has waited SERVED_BATCH_MS with no such
 * statement to ride. A process that dies holding marks leaves those requests served and not
 * charged (their reservations are dropped); a mark whose statement fails is tried again
 * (SERVED_RETRY_SECONDS).
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
 * group commit). One at a time makes larger groups: Postgres's cost is mostly per statement
 * (rows in groups of 3, 10 and 30 cost its backend about 530, 190 and 120 µs of CPU each on the
 * development machine), and a statement has to wait for a commit either way.
 */
const RECORD_IN_FLIGHT = 1;
const RECORD_MAX = 200;

interface Waiting<T, R> { value: T; done: (r: R) => void; failed: (err: unknown) => void }

/**
 * The ledger's hot-path writes: admitted rows (`insert`, each written before its answer leaves)
 * and served marks (`mark`, which report the ids they found), grouped as grouped-writes.ts
 * groups rows, the marks riding with the rows. `both` runs one statement of each kind; when a
 * statement holding several rows fails, the marks are written alone and the rows one by one,
 * so one row's error (a constraint) is its caller's alone.
 */
function ledgerWrites(
  insert: (rows: readonly Recorded[]) => Promise<void>,
  mark: (ids: readonly string[]) => Promise<Set<string>>,
  both: (rows: readonly Recorded[], ids: readonly string[]) => Promise<Set<string>>,
): { record: (row: Recorded) => Promise<void>; served: (id: string) => Promise<boolean> } {
  let rows: Waiting<Recorded, void>[] = [];
  let marks: Waiting<string, boolean>[] = [];
  let marksDue = false;
  let timer: NodeJS.Timeout | undefined;
  let busy = 0;
  const markAll = (calls: Waiting<string, boolean>[], found: Set<string>): void => { for (const c of calls) c.done(found.has(c.value)); };
  const settle = async (r: Waiting<Recorded, void>[], m: Waiting<string, boolean>[]): Promise<void> => {
    try {
      if (m.length === 0) await insert(r.map((c) => c.value));
      else markAll(m, await (r.length === 0 ? mark(m.map((c) => c.value)) : both(r.map((c) => c.value), m.map((c) => c.value))));
      for (const c of r) c.done();
    } catch (err) {
      // the statement wrote nothing: marks alone, rows one by one (a lone row's error is its own)
      const again: Promise<void>[] = [];
      if (m.length > 0 && r.length === 0) for (const c of m) c.failed(err);
      else if (m.length > 0) again.push(mark(m.map((c) => c.value)).then((found) => markAll(m, found), (e: unknown) => { for (const c of m) c.failed(e); }));
      if (r.length === 1 && m.length === 0) r[0]!.failed(err);
      else for (const c of r) again.push(insert([c.value]).then(() => c.done(), c.failed));
      await Promise.all(again);
    }
  };
  const pump = (): void => {
    while (busy < RECORD_IN_FLIGHT && (rows.length > 0 || (marksDue && marks.length > 0))) {
      const r = rows.slice(0, RECORD_MAX);
      rows = rows.slice(RECORD_MAX);
      const m = marks.slice(0, SERVED_BATCH_MAX);
      marks = marks.slice(SERVED_BATCH_MAX);
      if (marks.length === 0) { marksDue = false; clearTimeout(timer); timer = undefined; }
      busy += 1;
      void settle(r, m).finally(() => { busy -= 1; pump(); });
    }
  };
  return {
    record: (value) => new Promise<void>((done, failed) => { rows.push({ value, done, failed }); pump(); }),
    served: (value) => new Promise<boolean>((done, failed) => {
      marks.push({ value, done, failed });
      if (marks.length >= SERVED_BATCH_MAX) marksDue = true;
      else timer ??= setTimeout(() => { timer = undefined; marksDue = true; pump(); }, SERVED_BATCH_MS);
      pump();
    }),
  };
}

export function createUsageLedger(db: Db, opts: { reservationSeconds?: number } = {}): UsageLedger {
  const reservation = opts.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS;
  const slice = (start: bigint | undefined, chunk: bigint) => (start === undefined ? null : sliceText(start, chunk));
  // one fixed text whatever the group's size (arrays unnested): nothing to build per row, nothing new for Postgres to parse.
  // Rows go in ordered by the owner of their slices, the key the ledger locks them by (migration 1010): concurrent groups lock in one order
  const inserted = (rows: readonly Recorded[]) => sql`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, reserved_until, period_slice, account_slice)
    SELECT r, p, g, u, c::numeric, s::bigint, now() + make_interval(secs => ${reservation}), ps::int8range, acs::int8range
    FROM unnest(${rows.map((u) => u.requestId)}::text[], ${rows.map((u) => u.policy)}::text[], ${rows.map((u) => u.gateway)}::text[],
      ${rows.map((u) => u.userPayment)}::text[], ${rows.map((u) => u.chunk.toString())}::text[], ${rows.map((u) => u.periodStart.toString())}::text[],
      ${rows.map((u) => slice(u.periodSliceStart, u.chunk))}::text[], ${rows.map((u) => slice(u.accountSliceStart, u.chunk))}::text[])
      AS t(r, p, g, u, c, s, ps, acs)
    ORDER BY coalesce(u, p)`;
  const marked = (ids: readonly string[]) => sql<{ request_id: string }>`UPDATE payg_usage SET reserved_until = NULL WHERE request_id = ANY(${[...ids]}::text[]) RETURNING request_id`;
  const found = (rows: readonly { request_id: string }[]) => new Set(rows.map((r) => r.request_id));
  // a durable commit either way: a served request's mark survives a Postgres crash, so it is charged
  const writes = ledgerWrites(
    async (rows) => { await inserted(rows).execute(db); },
    async (ids) => found((await marked(ids).execute(db)).rows),
    // both in one statement: the UPDATE cannot see the rows this statement inserts, nor need to (a row is marked only once answered, so written before)
    async (rows, ids) => found((await sql<{ request_id: string }>`WITH i AS (${inserted(rows)} RETURNING 1), m AS (${marked(ids)})
      SELECT request_id FROM m`.execute(db)).rows),
  );
  return {
    record: writes.record,
    // a mark lost to a Postgres restart would leave a request served and never charged: retried
    // for about SERVED_RETRY_SECONDS (the statement is an UPDATE of the row, so running it twice is harmless)
    served: (requestId) => pRetry(() => writes.served(requestId), SERVED_RETRY),
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
