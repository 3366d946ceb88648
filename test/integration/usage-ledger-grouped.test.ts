/**
 * The usage ledger's hot-path writes, grouped: admitted rows of one round of the event loop go
 * in one statement, and rows arriving while statements are in flight go together in the next; served marks gather for a few milliseconds and go in an
 * UPDATE of their own, beside the rows' statements and never in them (an answer waits for its
 * row, nobody waits for a mark), and still report which reservations they found; a row a
 * statement refuses (an overlapping slice) fails only its own caller.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { overlapOf } from '../../commands/x402/meter-slices.js';
import pg from '../../infra/postgres/pg.js';

describe('usage ledger: grouped writes', () => {
  let env: TestEnv;
  let ledgerStatements = 0;
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const query = proto.query;

  before(async () => {
    env = await createTestEnv('usage-ledger-grouped');
    // counts the statements that touch the ledger's table
    proto.query = function counted(this: unknown, ...a: unknown[]) {
      const q = a[0] as string | { text?: string } | undefined;
      const text = typeof q === 'string' ? q : q?.text;
      if (text?.includes('payg_usage')) ledgerStatements += 1;
      return query.apply(this, a);
    };
  });
  after(async () => {
    proto.query = query;
    await env.close();
  });

  const row = (id: string, slice: bigint) => ({
    requestId: id, policy: 'policy-g', gateway: 'gateway-g', userPayment: 'account-g', chunk: 1n, periodStart: 100n, periodSliceStart: slice, accountSliceStart: slice,
  });
  const reserved = async (ids: string[]) => (await sql<{ request_id: string; reserved: boolean }>`
    SELECT request_id, reserved_until IS NOT NULL AS reserved FROM payg_usage WHERE request_id = ANY(${ids}::text[]) ORDER BY request_id`.execute(env.db)).rows;

  it('writes the rows of one round in one statement, and the marks of many requests in one of their own', async () => {
    const ledger = createUsageLedger(env.db);
    await Promise.all([ledger.record(row('a1', 0n)), ledger.record(row('a2', 1n))]);
    ledgerStatements = 0;
    // three marks and three more rows at once: the rows at the end of this round, the marks together once they have gathered
    const marks = [ledger.served('a1'), ledger.served('a2'), ledger.served('never-written')];
    await Promise.all([ledger.record(row('a3', 2n)), ledger.record(row('a4', 3n)), ledger.record(row('a5', 4n))]);
    const written = ledgerStatements;
    expect(await reserved(['a1', 'a2']), 'the rows did not wait for the marks').to.deep.equal([{ request_id: 'a1', reserved: true }, { request_id: 'a2', reserved: true }]);
    ledgerStatements = written;
    expect(await Promise.all(marks)).to.deep.equal([true, true, false]);
    // one INSERT of a3, a4 and a5, one UPDATE of the three marks (one each: six)
    expect(ledgerStatements).to.equal(2);
    expect(await reserved(['a1', 'a2', 'a3', 'a4', 'a5'])).to.deep.equal([
      { request_id: 'a1', reserved: false }, { request_id: 'a2', reserved: false },
      { request_id: 'a3', reserved: true }, { request_id: 'a4', reserved: true }, { request_id: 'a5', reserved: true },
    ]);
  });

  it('marks once they have gathered, and reports a dropped reservation', async () => {
    const ledger = createUsageLedger(env.db);
    await ledger.record(row('b1', 10n));
    await ledger.record(row('b2', 11n));
    await env.db.deleteFrom('payg_usage').where('request_id', '=', 'b2').execute(); // its reservation dropped by the settler
    expect(await Promise.all([ledger.served('b1'), ledger.served('b2')])).to.deep.equal([true, false]);
    expect(await reserved(['b1'])).to.deep.equal([{ request_id: 'b1', reserved: false }]);
  });

  it('fails only the row whose slice overlaps; the marks sent meanwhile land', async () => {
    const ledger = createUsageLedger(env.db);
    await Promise.all([ledger.record(row('c1', 20n)), ledger.record(row('c2', 21n))]);
    // one statement in flight, so that the next three rows go together, the overlapping one among them
    const busy = ledger.record(row('c3', 22n));
    const marks = [ledger.served('c1'), ledger.served('c2')];
    const results = await Promise.allSettled([ledger.record(row('c5', 24n)), ledger.record(row('c-overlap', 20n)), ledger.record(row('c6', 25n))]);
    await busy;
    expect(await Promise.all(marks)).to.deep.equal([true, true]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(overlapOf((results[1] as PromiseRejectedResult).reason)).to.equal('period');
    expect(await reserved(['c1', 'c2', 'c5', 'c6', 'c-overlap'])).to.deep.equal([
      { request_id: 'c1', reserved: false }, { request_id: 'c2', reserved: false }, { request_id: 'c5', reserved: true }, { request_id: 'c6', reserved: true },
    ]);
  });

  it('runs the admitted rows as a prepared statement: parsed once per connection', async () => {
    // one connection, so that the statement and the question about it meet on one backend
    const one = env.oneConnection();
    const ledger = createUsageLedger(one);
    await ledger.record(row('d1', 30n));
    await ledger.record(row('d2', 31n));
    const prepared = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements`.execute(one);
    expect(prepared.rows.map((r) => r.name)).to.include('payg_usage_insert_rows');
  });
});
