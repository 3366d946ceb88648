/**
 * The usage ledger's hot-path writes, grouped: admitted rows of one round of the event loop go
 * in one statement, and rows arriving while statements are in flight go together in the next;
 * served marks are one row of the process (served-marks.ts), never an UPDATE of the rows, and
 * cover a request once every row written before it was answered, never one answered unserved;
 * a row a statement refuses (an overlapping slice) fails only its own caller and holds no mark up.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { overlapOf } from '../../commands/x402/meter-slices.js';
import { countStatements, type StatementCount } from '../support/pg-statements.js';
import * as m1014 from '../../infra/migrations/1014_payg_served_marks.js';

describe('usage ledger: grouped writes', () => {
  let env: TestEnv;
  let ledgerStatements: StatementCount;

  before(async () => {
    env = await createTestEnv('usage-ledger-grouped');
    // counts the statements that touch the ledger's table
    ledgerStatements = countStatements((text) => text.includes('payg_usage'));
  });
  after(async () => {
    ledgerStatements?.restore();
    await env.close();
  });

  const row = (id: string, slice: bigint) => ({
    requestId: id, policy: 'policy-g', gateway: 'gateway-g', userPayment: 'account-g', chunk: 1n, periodStart: 100n, periodSliceStart: slice, accountSliceStart: slice,
  });
  const reserved = async (ids: string[]) => (await sql<{ request_id: string; reserved: boolean }>`
    SELECT request_id, NOT payg_usage_served(u) AS reserved FROM payg_usage u WHERE request_id = ANY(${ids}::text[]) ORDER BY request_id`.execute(env.db)).rows;
  const marks = async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM payg_served_marks`.execute(env.db)).rows[0]!.n;

  it('writes the rows of one round in one statement, and the marks of many answered requests as one row of the process', async () => {
    const ledger = createUsageLedger(env.db);
    await Promise.all([ledger.record(row('a1', 0n)), ledger.record(row('a2', 1n))]);
    ledgerStatements.n = 0;
    const before = await marks();
    // two marks, one of a row this ledger never wrote, and three more rows at once: the rows at the end of this round
    const served = [ledger.served('a1'), ledger.served('a2'), ledger.served('never-written')];
    await Promise.all([ledger.record(row('a3', 2n)), ledger.record(row('a4', 3n)), ledger.record(row('a5', 4n))]);
    expect(ledgerStatements.n, 'one INSERT of a3, a4 and a5; no statement of the rows for the marks').to.equal(1);
    await Promise.all(served);
    expect(ledgerStatements.n, 'the marks touched no row').to.equal(1);
    expect(await marks(), 'one mark row for the process').to.equal(before + 1);
    expect(await reserved(['a1', 'a2', 'a3', 'a4', 'a5'])).to.deep.equal([
      { request_id: 'a1', reserved: false }, { request_id: 'a2', reserved: false },
      { request_id: 'a3', reserved: true }, { request_id: 'a4', reserved: true }, { request_id: 'a5', reserved: true },
    ]);
  });

  it('a row recorded ahead holds no later row\'s mark back while it waits, and is covered only once its own request is served', async () => {
    const ledger = createUsageLedger(env.db);
    await Promise.all([ledger.record({ ...row('ahead-1', 9000n), ahead: true }), ledger.record({ ...row('ahead-2', 9001n), ahead: true })]);
    await ledger.record(row('ahead-3', 9002n));
    await ledger.served('ahead-3');
    expect(await reserved(['ahead-1', 'ahead-2', 'ahead-3']), 'ahead-3 covered past the rows recorded ahead, which stay out').to.deep.equal([
      { request_id: 'ahead-1', reserved: true }, { request_id: 'ahead-2', reserved: true }, { request_id: 'ahead-3', reserved: false },
    ]);
    // h1 taken and served; h2 never taken: its row goes, and with it its number
    await ledger.served('ahead-1');
    await ledger.unserved('ahead-2');
    await ledger.flush();
    expect(await reserved(['ahead-1', 'ahead-2', 'ahead-3'])).to.deep.equal([{ request_id: 'ahead-1', reserved: false }, { request_id: 'ahead-3', reserved: false }]);
  });

  it('covers an answered request only once every request written before it was answered, and never one answered unserved', async () => {
    const ledger = createUsageLedger(env.db);
    for (const [i, id] of ['b1', 'b2', 'b3'].entries()) await ledger.record(row(id, 10n + BigInt(i)));
    const b3 = ledger.served('b3');
    await Promise.all([ledger.served('b1'), Promise.race([b3, new Promise((r) => setTimeout(r, 200))])]);
    expect(await reserved(['b1', 'b2', 'b3']), 'b3 waits for b2, still open').to.deep.equal([
      { request_id: 'b1', reserved: false }, { request_id: 'b2', reserved: true }, { request_id: 'b3', reserved: true },
    ]);
    expect(await ledger.unserved('b2'), 'b2 ended unanswered: its row taken back').to.deep.include({ policy: 'policy-g', chunk: 1n });
    await b3;
    expect(await reserved(['b1', 'b2', 'b3'])).to.deep.equal([{ request_id: 'b1', reserved: false }, { request_id: 'b3', reserved: false }]);
  });

  it('fails only the row whose slice overlaps, whose number then holds nothing up', async () => {
    const ledger = createUsageLedger(env.db);
    await Promise.all([ledger.record(row('c1', 20n)), ledger.record(row('c2', 21n))]);
    // one statement in flight, so that the next three rows go together, the overlapping one among them
    const busy = ledger.record(row('c3', 22n));
    const results = await Promise.allSettled([ledger.record(row('c5', 24n)), ledger.record(row('c-overlap', 20n)), ledger.record(row('c6', 25n))]);
    await busy;
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(overlapOf((results[1] as PromiseRejectedResult).reason)).to.equal('period');
    await Promise.all(['c1', 'c2', 'c3', 'c5', 'c6'].map((id) => ledger.served(id)));
    expect(await reserved(['c1', 'c2', 'c3', 'c5', 'c6', 'c-overlap'])).to.deep.equal(['c1', 'c2', 'c3', 'c5', 'c6'].map((id) => ({ request_id: id, reserved: false })));
  });

  /** a row never answered (`hung`), then one served after it, under a ledger of `reservationSeconds`: `covered`, once its mark is durable */
  const servedBehindHung = async (reservationSeconds: number, hung: string, served: string, slice: bigint) => {
    const ledger = createUsageLedger(env.db, { reservationSeconds });
    await ledger.record(row(hung, slice));
    await ledger.record(row(served, slice + 1n));
    return { covered: ledger.served(served) };
  };

  it('gives up a number left open past the reservation\'s bound: its row never charged, the later rows covered', async function () {
    this.timeout(10_000);
    const { covered } = await servedBehindHung(1, 'e1', 'e2', 40n);
    expect(await reserved(['e1', 'e2'])).to.deep.equal([{ request_id: 'e1', reserved: true }, { request_id: 'e2', reserved: true }]);
    await covered;
    expect(await reserved(['e1', 'e2']), 'e1 given up and taken back; e2 covered').to.deep.equal([{ request_id: 'e2', reserved: false }]);
  });

  it('gives a number up before the rows written after it reach their own bound, so they are covered within it', async function () {
    this.timeout(20_000);
    await (await servedBehindHung(10, 'h1', 'h2', 70n)).covered;
    const [h2] = (await sql<{ reserved_until: Date; marked: Date }>`
      SELECT u.reserved_until, m.updated_at AS marked FROM payg_usage u JOIN payg_served_marks m ON m.node = u.served_by WHERE u.request_id = 'h2'`.execute(env.db)).rows;
    // given up at the bound, h1's number let the mark cover h2 only a sweep after h2's own bound: served and droppable
    expect(h2!.reserved_until.getTime() - h2!.marked.getTime(), 'h2 covered at least a second before its bound').to.be.greaterThan(1000);
    expect(await reserved(['h1', 'h2']), 'h1 given up and taken back; h2 covered').to.deep.equal([{ request_id: 'h2', reserved: false }]);
  });

  it('writes the mark at once when flushed (a node stopping), its served requests covered before it returns', async () => {
    const ledger = createUsageLedger(env.db);
    await ledger.record(row('g1', 60n));
    void ledger.served('g1');
    await ledger.flush();
    expect(await reserved(['g1'])).to.deep.equal([{ request_id: 'g1', reserved: false }]);
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

  it('leaves no served row a reservation when migration 1014 is taken back (its down() folds the marks into the rows)', async () => {
    const ledger = createUsageLedger(env.db);
    await ledger.record(row('m1', 50n));
    await ledger.record(row('m2', 51n));
    await ledger.served('m1');
    await m1014.down(env.db);
    const rows = await sql<{ request_id: string; reserved: boolean }>`
      SELECT request_id, reserved_until IS NOT NULL AS reserved FROM payg_usage WHERE request_id IN ('m1', 'm2') ORDER BY 1`.execute(env.db);
    expect(rows.rows).to.deep.equal([{ request_id: 'm1', reserved: false }, { request_id: 'm2', reserved: true }]);
    await m1014.up(env.db);
    expect(await reserved(['m1', 'm2'])).to.deep.equal([{ request_id: 'm1', reserved: false }, { request_id: 'm2', reserved: true }]);
  });
});
