/**
 * A served request's mark survives a Postgres restart under it. The soak's PostgreSQL restart
 * killed a mark's statement ("terminating connection due to administrator command"): the
 * request had been answered, its mark was given up at once, and its reservation would have been
 * dropped uncharged at its bound. The mark is now tried again until Postgres answers.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import pg from '../../infra/postgres/pg.js';

describe('usage ledger: a served mark whose statement Postgres killed', () => {
  let env: TestEnv;
  before(async () => { env = await createTestEnv('usage-ledger-mark-retry'); });
  after(async () => { await env.close(); });

  it('is written by a later attempt, so the request is charged', async function () {
    this.timeout(20_000);
    const ledger = createUsageLedger(env.db);
    const id = 'req-killed-mark';
    await ledger.record({ requestId: id, policy: 'policy-k', gateway: 'gateway-k', userPayment: 'account-k', chunk: 10n, periodStart: 100n, periodSliceStart: 0n, accountSliceStart: 0n });

    // another session holds the row, so the mark's UPDATE waits on it, in flight
    const locker = new pg.Client({ connectionString: env.dbUrl });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM payg_usage WHERE request_id = $1 FOR UPDATE', [id]);
    const marked = ledger.served(id);

    // the restart's effect on that statement: its backend is terminated by the server
    let killed = false;
    for (let i = 0; i < 100 && !killed; i += 1) {
      const r = await sql<{ n: number }>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE payg_usage%'`.execute(env.db);
      killed = r.rows[0]!.n > 0;
      if (!killed) await new Promise((r2) => setTimeout(r2, 50));
    }
    expect(killed, 'the mark statement was seen waiting and terminated').to.equal(true);
    await locker.query('ROLLBACK');
    await locker.end();

    expect(await marked).to.equal(true);
    const row = await env.db.selectFrom('payg_usage').select(['reserved_until']).where('request_id', '=', id).executeTakeFirstOrThrow();
    expect(row.reserved_until, 'chargeable: no longer a reservation').to.equal(null);
  });
});
