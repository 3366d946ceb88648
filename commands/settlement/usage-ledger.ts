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
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { UsageLedger } from '../x402/metering.js';
import { sliceText } from '../x402/meter-slices.js';
import { groupedWrites } from '../../infra/postgres/grouped-writes.js';

type Recorded = Parameters<UsageLedger['record']>[0];

/** How long a request may take to be served before its reservation is dropped (and it is never charged). */
export const DEFAULT_RESERVATION_SECONDS = 300;
/**
 * Requests served are marked together, one UPDATE per this many ms and node, rather than a
 * statement of its own per request on the metered route. A process that dies holding marks
 * leaves those requests served and not charged (their reservations are dropped).
 */
const SERVED_BATCH_MS = 10;
const SERVED_BATCH_MAX = 500;

/** Calls made within `ms` of each other run as one `run` over their keys; each learns whether its key was found. */
function batched(ms: number, run: (keys: readonly string[]) => Promise<Set<string>>): (key: string) => Promise<boolean> {
  let waiting: { key: string; done: (found: boolean) => void; failed: (err: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    timer = undefined;
    const calls = waiting;
    waiting = [];
    run(calls.map((c) => c.key)).then((found) => { for (const c of calls) c.done(found.has(c.key)); }, (err: unknown) => { for (const c of calls) c.failed(err); });
  };
  return (key) => new Promise<boolean>((done, failed) => {
    waiting.push({ key, done, failed });
    if (waiting.length >= SERVED_BATCH_MAX) { clearTimeout(timer); flush(); } else timer ??= setTimeout(flush, ms);
  });
}

export function createUsageLedger(db: Db, opts: { reservationSeconds?: number } = {}): UsageLedger {
  const reservation = opts.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS;
  return {
    // concurrent requests' rows in one statement (a group commit), each still written before its answer
    record: groupedWrites(async (rows: readonly Recorded[]) => {
      // one fixed text whatever the group's size (arrays unnested): nothing to build per row, nothing new for Postgres to parse
      const slice = (start: bigint | undefined, chunk: bigint) => (start === undefined ? null : sliceText(start, chunk));
      await sql`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, reserved_until, period_slice, account_slice)
        SELECT r, p, g, u, c::numeric, s::bigint, now() + make_interval(secs => ${reservation}), ps::int8range, acs::int8range
        FROM unnest(${rows.map((u) => u.requestId)}::text[], ${rows.map((u) => u.policy)}::text[], ${rows.map((u) => u.gateway)}::text[],
          ${rows.map((u) => u.userPayment)}::text[], ${rows.map((u) => u.chunk.toString())}::text[], ${rows.map((u) => u.periodStart.toString())}::text[],
          ${rows.map((u) => slice(u.periodSliceStart, u.chunk))}::text[], ${rows.map((u) => slice(u.accountSliceStart, u.chunk))}::text[])
          AS t(r, p, g, u, c, s, ps, acs)`.execute(db);
    }),
    // a durable commit: a served request's mark survives a Postgres crash, so it is charged
    served: batched(SERVED_BATCH_MS, async (requestIds) => {
      const rows = await sql<{ request_id: string }>`UPDATE payg_usage SET reserved_until = NULL
        WHERE request_id = ANY(${[...requestIds]}::text[]) RETURNING request_id`.execute(db);
      return new Set(rows.rows.map((r) => r.request_id));
    }),
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
