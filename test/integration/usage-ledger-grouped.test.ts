/**
 * The usage ledger's hot-path writes, grouped: served marks ride in the statement that writes
 * the next admitted rows (one round trip and one commit for both) instead of an UPDATE of their
 * own, and still report which reservations they found; a row a statement refuses (an
 * overlapping slice) fails only its own caller, and the marks that rode with it still land.
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

  it('sends served marks in the statement of the next admitted rows, not one of their own', async () => {
    const ledger = createUsageLedger(env.db);
    await Promise.all([ledger.record(row('a1', 0n)), ledger.record(row('a2', 1n))]);
    ledgerStatements = 0;
    // two requests answered, then two more admitted meanwhile (two statements may be in flight at once)
    const marks = [ledger.served('a1'), ledger.served('a2'), ledger.served('never-written')];
    await Promise.all([ledger.record(row('a3', 2n)), ledger.record(row('a4', 3n))]);
    expect(await Promise.all(marks)).to.deep.equal([true, true, false]);
    // before: an INSERT each for a3 and a4 (two in flight), then the marks' own UPDATE
    expect(ledgerStatements).to.equal(2);
    expect(await reserved(['a1', 'a2', 'a3', 'a4'])).to.deep.equal([
      { request_id: 'a1', reserved: false }, { request_id: 'a2', reserved: false }, { request_id: 'a3', reserved: true }, { request_id: 'a4', reserved: true },
    ]);
  });

  it('marks alone once they have waited with no rows to ride, and a dropped reservation is reported', async () => {
    const ledger = createUsageLedger(env.db);
    await ledger.record(row('b1', 10n));
    await ledger.record(row('b2', 11n));
    await env.db.deleteFrom('payg_usage').where('request_id', '=', 'b2').execute(); // its reservation dropped by the settler
    expect(await Promise.all([ledger.served('b1'), ledger.served('b2')])).to.deep.equal([true, false]);
    expect(await reserved(['b1'])).to.deep.equal([{ request_id: 'b1', reserved: false }]);
  });

  it('fails only the row whose slice overlaps, and the marks riding with it still land', async () => {
    const ledger = createUsageLedger(env.db);
    await Promise.all([ledger.record(row('c1', 20n)), ledger.record(row('c2', 21n))]);
    // keep both statement slots busy so that the marks and the next rows go together
    const busy = [ledger.record(row('c3', 22n)), ledger.record(row('c4', 23n))];
    const marks = [ledger.served('c1'), ledger.served('c2')];
    const results = await Promise.allSettled([ledger.record(row('c5', 24n)), ledger.record(row('c-overlap', 20n)), ledger.record(row('c6', 25n))]);
    await Promise.all(busy);
    expect(await Promise.all(marks)).to.deep.equal([true, true]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(overlapOf((results[1] as PromiseRejectedResult).reason)).to.equal('period');
    expect(await reserved(['c1', 'c2', 'c5', 'c6', 'c-overlap'])).to.deep.equal([
      { request_id: 'c1', reserved: false }, { request_id: 'c2', reserved: false }, { request_id: 'c5', reserved: true }, { request_id: 'c6', reserved: true },
    ]);
  });
});
