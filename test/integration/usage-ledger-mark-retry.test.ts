/**
 * Served marks through Postgres's failures. A mark's statement killed under it (the soak's
 * PostgreSQL restart: "terminating connection due to administrator command") is written again
 * until Postgres answers, so the request is charged. A request answered unserved whose row
 * could not be deleted is never covered by its process's mark: its number stays in the mark's
 * `unserved` list until a later deletion is confirmed.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { createServedMarks } from '../../commands/settlement/served-marks.js';
import { waitFor } from '../support/process.js';
import pg from '../../infra/postgres/pg.js';

describe('usage ledger: served marks when Postgres fails', () => {
  let env: TestEnv;
  before(async () => { env = await createTestEnv('usage-ledger-mark-retry'); });
  after(async () => { await env.close(); });

  const row = (id: string, slice: bigint) => ({
    requestId: id, policy: 'policy-k', gateway: 'gateway-k', userPayment: 'account-k', chunk: 10n, periodStart: 100n, periodSliceStart: slice, accountSliceStart: slice,
  });
  const served = async (ids: string[]) => (await sql<{ request_id: string; served: boolean }>`
    SELECT request_id, payg_usage_served(u) AS served FROM payg_usage u WHERE request_id = ANY(${ids}::text[]) ORDER BY request_id`.execute(env.db)).rows;

  it('writes a mark whose statement Postgres killed again, so the request is charged', async function () {
    this.timeout(20_000);
    const ledger = createUsageLedger(env.db);
    await ledger.record(row('req-first', 0n));
    await ledger.served('req-first'); // the process's mark row exists
    const id = 'req-killed-mark';
    await ledger.record(row(id, 10n));

    // another session holds the mark's row, so the mark's statement waits on it, in flight
    const locker = new pg.Client({ connectionString: env.dbUrl });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM payg_served_marks FOR UPDATE');
    const marked = ledger.served(id);

    // the restart's effect on that statement: its backend is terminated by the server
    let killed = false;
    for (let i = 0; i < 100 && !killed; i += 1) {
      const r = await sql<{ n: number }>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO payg_served_marks%'`.execute(env.db);
      killed = r.rows[0]!.n > 0;
      if (!killed) await new Promise((r2) => setTimeout(r2, 50));
    }
    expect(killed, 'the mark statement was seen waiting and terminated').to.equal(true);
    expect(await served([id]), 'not served while its mark is not written').to.deep.equal([{ request_id: id, served: false }]);
    await locker.query('ROLLBACK');
    await locker.end();

    await marked;
    expect(await served([id]), 'chargeable').to.deep.equal([{ request_id: id, served: true }]);
  });

  it('never covers a request answered unserved whose row is still there, and takes the row back later', async function () {
    this.timeout(20_000);
    let attempts = 0;
    const deleteRow = async (id: string) => {
      attempts += 1;
      if (attempts === 1) throw new Error('Connection terminated unexpectedly');
      await env.db.deleteFrom('payg_usage').where('request_id', '=', id).execute();
    };
    const marks = createServedMarks(env.db, { reservationSeconds: 300, deleteRow });
    // two rows numbered by this process, as the ledger writes them
    const write = async (id: string, slice: number) => {
      const seq = marks.open(id);
      await sql`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, reserved_until, period_slice, account_slice, served_by, served_seq)
        VALUES (${id}, 'policy-u', 'gateway-u', 'account-u', 10, 100, now() + interval '5 minutes', ${`[${slice},${slice + 10})`}::int8range,
                ${`[${slice},${slice + 10})`}::int8range, ${marks.node}::bigint, ${seq})`.execute(env.db);
      return seq;
    };
    const s1 = await write('f1', 0);
    await write('f2', 10);
    // the take-back's first try fails; the sweep tries the same take-back again
    const failed = await marks.removed('f1', () => deleteRow('f1')).then(() => 'deleted', (e: Error) => e.message);
    expect(failed).to.equal('Connection terminated unexpectedly');
    await marks.served('f2');
    expect(await served(['f1', 'f2']), 'f1 not covered: its row may still be there').to.deep.equal([
      { request_id: 'f1', served: false }, { request_id: 'f2', served: true },
    ]);
    const mark = await env.db.selectFrom('payg_served_marks').select(['unserved']).where('node', '=', marks.node).executeTakeFirstOrThrow();
    expect(mark.unserved.map(String)).to.deep.equal([String(s1)]);
    // the sweep deletes it again (a first failure, then the deletion) and the list empties
    await waitFor(async () => (await env.db.selectFrom('payg_served_marks').select(['unserved']).where('node', '=', marks.node).executeTakeFirstOrThrow()).unserved.length === 0,
      10_000, 'the unconfirmed deletion confirmed');
    expect(attempts).to.equal(2);
    expect(await served(['f1', 'f2'])).to.deep.equal([{ request_id: 'f2', served: true }]);
  });
});
