/**
 * The ledger keeps the slices of one counter apart (migrations 1010_meter_slices_btree and
 * 1011_meter_slices_statement: a statement's inserted rows checked together, an update by row): a
 * row whose slice overlaps one another row of the same counter holds is refused with the
 * exclusion violation the metering code reads (meter-slices.ts overlapOf), whether the
 * other row is old, written by the same statement, or written by a transaction not
 * committed yet; rows of other counters are never held up by it; and groups of rows
 * written at once by several nodes in any order never deadlock.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import pg from '../../infra/postgres/pg.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createUsageLedger } from '../../commands/settlement/usage-ledger.js';
import { createCreditLedger } from '../../commands/x402/prepaid/ledger.js';
import { overlapOf } from '../../commands/x402/meter-slices.js';
import * as m1013 from '../../infra/migrations/1013_meter_slices_by_counter.js';

describe('usage ledger: slices of one counter never overlap', function () {
  this.timeout(60_000);
  let env: TestEnv;
  before(async () => { env = await createTestEnv('meter-slices-ledger'); });
  after(async () => { await env?.close(); });

  let n = 0;
  const payg = (o: { policy?: string; account?: string; period?: number; slice?: [number, number]; account_slice?: [number, number] }) => ({
    requestId: `req-${n += 1}`, policy: o.policy ?? 'policy-1', gateway: 'gw', userPayment: o.account ?? 'account-1',
    chunk: BigInt((o.slice ?? o.account_slice ?? [0, 1])[1] - (o.slice ?? o.account_slice ?? [0, 1])[0]), periodStart: BigInt(o.period ?? 100),
    ...(o.slice ? { periodSliceStart: BigInt(o.slice[0]) } : {}),
    ...(o.account_slice ? { accountSliceStart: BigInt(o.account_slice[0]) } : {}),
  });
  const refusal = (p: Promise<unknown>) => p.then(() => 'admitted', (err: unknown) => overlapOf(err) ?? `other: ${(err as Error).message}`);

  it('admits adjacent and gap-filling slices and refuses every overlap, by the counter it breaks', async () => {
    const ledger = createUsageLedger(env.db);
    const rec = (o: Parameters<typeof payg>[0]) => refusal(ledger.record(payg({ ...o, account_slice: o.account_slice ?? o.slice })));
    expect(await rec({ slice: [0, 5] })).to.equal('admitted');
    expect(await rec({ slice: [10, 15] })).to.equal('admitted');
    expect(await rec({ slice: [5, 10] }), 'the gap exactly').to.equal('admitted');
    expect(await rec({ slice: [4, 6] }), 'across a boundary').to.equal('period');
    expect(await rec({ slice: [14, 20] }), 'the last one\'s end').to.equal('period');
    expect(await rec({ slice: [-3, 1] }), 'the first one\'s start').to.equal('period');
    expect(await rec({ slice: [2, 3] }), 'inside one').to.equal('period');
    expect(await rec({ slice: [-5, 30] }), 'over all').to.equal('period');
    expect(await rec({ slice: [15, 16] })).to.equal('admitted');
    // another period of the same policy has counters of its own; the account's position is shared
    expect(await rec({ period: 200, slice: [0, 5], account_slice: [16, 21] })).to.equal('admitted');
    expect(await rec({ period: 200, slice: [5, 6], account_slice: [3, 4] }), 'the account\'s slice').to.equal('account');
    // another account's policy: nothing in common
    expect(await rec({ policy: 'policy-2', account: 'account-2', slice: [0, 5] })).to.equal('admitted');
    // an account's slices span its policies
    expect(await rec({ policy: 'policy-3', slice: [0, 1], account_slice: [20, 22] })).to.equal('account');
  });

  it('refuses an overlap within one statement of several rows (the row alone, not its neighbours)', async () => {
    const ledger = createUsageLedger(env.db);
    const rows = [payg({ policy: 'p-batch', account: 'a-batch', slice: [0, 2] }), payg({ policy: 'p-batch', account: 'a-batch', slice: [1, 3] }),
      payg({ policy: 'p-batch', account: 'a-batch', slice: [2, 4], account_slice: [10, 12] })];
    const outcomes = await Promise.all(rows.map((r) => refusal(ledger.record({ ...r, accountSliceStart: r.accountSliceStart ?? r.periodSliceStart }))));
    expect(outcomes.filter((o) => o === 'admitted')).to.have.length(2);
    expect(outcomes.filter((o) => o === 'period')).to.have.length(1);
  });

  it('refuses a statement whose own rows overlap, however they lie, and admits one whose rows only touch', async () => {
    // one INSERT of several rows, as the ledgers' grouped statements write them
    const insert = (slices: [number, number][], policy: string) => refusal(sql`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, period_slice, account_slice)
      SELECT 'stmt-' || ${policy} || '-' || i, ${policy}, 'gw', ${`acct-${policy}`}, 1, 100, s::int8range, s::int8range
      FROM unnest(${slices.map(([a, b]) => `[${a},${b})`)}::text[]) WITH ORDINALITY AS t(s, i)`.execute(env.db));
    expect(await insert([[0, 3], [3, 5], [5, 6]], 'touching')).to.equal('admitted');
    expect(await insert([[0, 10], [2, 3]], 'contained')).to.equal('period');
    expect(await insert([[5, 8], [0, 2], [7, 9]], 'apart-then-crossing')).to.equal('period');
    expect(await insert([[0, 4], [8, 9], [3, 6]], 'crossing-first')).to.equal('period');
    // a refused statement wrote nothing
    const written = await sql<{ policy: string }>`SELECT DISTINCT policy FROM payg_usage WHERE request_id LIKE 'stmt-%' ORDER BY policy`.execute(env.db);
    expect(written.rows.map((r) => r.policy)).to.deep.equal(['touching']);
  });

  it('checks a statement\'s rows once per counter, against the rows held below, among and above their span (1013), as 1011 did row by row', async () => {
    const insert = (rows: { policy: string; slice: [number, number] }[], tag: string) => refusal(sql`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, period_slice, account_slice)
      SELECT ${tag} || '-' || i, p, 'gw', 'acct-' || p, 1, 100, s::int8range, NULL
      FROM unnest(${rows.map((r) => r.policy)}::text[], ${rows.map((r) => `[${r.slice[0]},${r.slice[1]})`)}::text[]) WITH ORDINALITY AS t(p, s, i)`.execute(env.db));
    const cases = async (v: string) => {
      const p = (slice: [number, number], policy = `span-${v}`) => ({ policy, slice });
      for (const [i, slice] of ([[0, 5], [10, 15], [20, 25], [30, 100]] as [number, number][]).entries()) expect(await insert([p(slice)], `${v}-held-${i}`)).to.equal('admitted');
      expect(await insert([p([5, 10]), p([15, 20])], `${v}-gaps`), `${v}: both gaps, a held row between them`).to.equal('admitted');
      expect(await insert([p([120, 121]), p([14, 15])], `${v}-below`), `${v}: the row held below the span reaches into it`).to.equal('period');
      expect(await insert([p([26, 27]), p([22, 23])], `${v}-among`), `${v}: a row held within the span`).to.equal('period');
      expect(await insert([p([40, 41]), p([120, 121])], `${v}-long`), `${v}: a long row held below the span`).to.equal('period');
      expect(await insert([p([100, 101]), p([3, 4], `other-${v}`)], `${v}-two`), `${v}: another counter's rows in the same statement`).to.equal('admitted');
      expect(await insert([p([101, 102]), p([3, 5], `other-${v}`)], `${v}-two-refused`), `${v}: one of two counters overlapping`).to.equal('period');
      expect(await insert([p([25, 26]), p([26, 30]), p([101, 110])], `${v}-top`)).to.equal('admitted');
    };
    await cases('1013');
    await m1013.down(env.db);
    try {
      await cases('1011');
    } finally {
      await m1013.up(env.db);
    }
    expect(await insert([{ policy: 'span-1013', slice: [104, 105] }], 'after-up'), 'the by-counter check back in place').to.equal('period');
  });

  it('refuses an update that moves a row\'s slice onto another\'s', async () => {
    const ledger = createUsageLedger(env.db);
    await ledger.record(payg({ policy: 'p-upd', account: 'a-upd', slice: [0, 5], account_slice: [0, 5] }));
    const moved = payg({ policy: 'p-upd', account: 'a-upd', slice: [10, 15], account_slice: [10, 15] });
    await ledger.record(moved);
    expect(await refusal(sql`UPDATE payg_usage SET period_slice = '[3,8)' WHERE request_id = ${moved.requestId}`.execute(env.db))).to.equal('period');
    expect(await refusal(sql`UPDATE payg_usage SET period_slice = '[5,10)' WHERE request_id = ${moved.requestId}`.execute(env.db))).to.equal('admitted');
  });

  it('holds a writer whose slice overlaps a row not committed yet, and refuses it once that commits', async () => {
    const a = new pg.Client({ connectionString: env.dbUrl });
    const b = new pg.Client({ connectionString: env.dbUrl });
    await a.connect();
    await b.connect();
    try {
      const insert = (c: pg.Client, id: string, slice: string) => c.query(`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, period_slice, account_slice)
        VALUES ($1, 'p-tx', 'gw', 'a-tx', 10, 0, $2::int8range, $2::int8range)`, [id, slice]);
      await a.query('BEGIN');
      await insert(a, 'tx-a', '[0,10)');
      const late = refusal(insert(b, 'tx-b', '[5,15)'));
      let settled = false;
      void late.then(() => { settled = true; });
      await new Promise((r) => setTimeout(r, 300));
      expect(settled, 'the second writer waits for the first').to.equal(false);
      await a.query('COMMIT');
      expect(await late).to.equal('period');
      // a writer of another account is never held: it goes through while a transaction holds this one
      await a.query('BEGIN');
      await insert(a, 'tx-c', '[20,30)');
      const other = await b.query(`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, period_slice, account_slice)
        VALUES ('tx-d', 'p-tx-2', 'gw', 'a-tx-2', 10, 0, '[0,10)', '[0,10)') RETURNING request_id`);
      expect(other.rows).to.have.length(1);
      await a.query('ROLLBACK');
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('keeps a prepaid credit\'s slices apart the same way', async () => {
    const credits = createCreditLedger(env.db);
    const use = (id: string, start: number, amount: number, policy = 'credit-1') =>
      refusal(credits.recordUse({ requestId: id, policy, gateway: 'gw', amount: BigInt(amount), sliceStart: BigInt(start) }));
    expect(await use('c1', 0, 5)).to.equal('admitted');
    expect(await use('c2', 5, 5)).to.equal('admitted');
    expect(await use('c3', 8, 5)).to.equal('credit');
    expect(await use('c4', 0, 5, 'credit-2')).to.equal('admitted');
  });

  it('admits random slices from many writers at once so that what it holds is pairwise disjoint', async () => {
    // four "nodes", each its own ledger (its own grouped statements), writing rows of three accounts in shuffled orders
    const nodes = [0, 1, 2, 3].map(() => createUsageLedger(env.db));
    let seed = 7;
    const rand = (k: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % k; };
    const outcomes: string[] = [];
    for (let round = 0; round < 30; round += 1) {
      const writes: Promise<string>[] = [];
      for (let i = 0; i < 24; i += 1) {
        const account = `acct-${rand(3)}`;
        const start = rand(400);
        const len = 1 + rand(6);
        writes.push(refusal(nodes[rand(4)]!.record(payg({ policy: `pol-${account}`, account, period: 1, slice: [start, start + len], account_slice: [start, start + len] }))));
      }
      outcomes.push(...await Promise.all(writes));
    }
    expect(outcomes.filter((o) => o.startsWith('other'))).to.deep.equal([]);
    expect(outcomes.filter((o) => o === 'admitted').length).to.be.greaterThan(50);
    expect(outcomes.filter((o) => o === 'period').length).to.be.greaterThan(50);
    const overlapping = await sql<{ n: string }>`
      SELECT count(*)::text AS n FROM payg_usage x JOIN payg_usage y ON x.request_id < y.request_id
      WHERE x.user_payment LIKE 'acct-%' AND ((x.policy = y.policy AND x.period_start = y.period_start AND x.period_slice && y.period_slice)
         OR (x.user_payment = y.user_payment AND x.account_slice && y.account_slice))`.execute(env.db);
    expect(overlapping.rows[0]!.n, 'rows holding overlapping slices').to.equal('0');
  });

  it('never deadlocks two nodes whose groups hold the same two accounts in opposite orders', async () => {
    // the statements' errors, as the pg client sees them
    const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
    const query = proto.query;
    const codes: string[] = [];
    proto.query = function watched(this: unknown, ...a: unknown[]) {
      const r = query.apply(this, a);
      if (r instanceof Promise) r.catch((err: { code?: string }) => { codes.push(err.code ?? '?'); });
      return r;
    };
    const holders: pg.Client[] = [];
    // a transaction that holds an account's slices until it ends
    const hold = async (account: string) => {
      const c = new pg.Client({ connectionString: env.dbUrl });
      await c.connect();
      holders.push(c);
      await c.query('BEGIN');
      await c.query(`INSERT INTO payg_usage (request_id, policy, gateway, user_payment, chunk, period_start, period_slice, account_slice)
        VALUES ($1, $2, 'gw', $3, 1, 0, '[1000,1001)', '[1000,1001)')`, [`hold-${account}`, `pol-${account}`, account]);
      return c;
    };
    const row = (account: string, at: number) => payg({ policy: `pol-${account}`, account, period: 0, slice: [at, at + 1], account_slice: [at, at + 1] });
    const pause = () => new Promise((r) => setTimeout(r, 300));
    try {
      const [y, z, w] = [await hold('dl-Y'), await hold('dl-Z'), await hold('dl-W')];
      const node1 = createUsageLedger(env.db);
      const node2 = createUsageLedger(env.db);
      // each node's first statement waits on an account held elsewhere, so its next two rows go out together in one statement
      const writes = [node2.record(row('dl-Z', 0)), node2.record(row('dl-Y', 1)), node2.record(row('dl-X', 1)),
        node1.record(row('dl-W', 0)), node1.record(row('dl-X', 2)), node1.record(row('dl-Y', 2))];
      await pause();
      await z.query('COMMIT'); // node 2 sends its group of Y and X: it waits on Y
      await pause();
      await w.query('COMMIT'); // node 1 sends its group of X and Y
      await pause();
      await y.query('COMMIT'); // the first in line on Y goes on
      const outcomes = await Promise.all(writes.map((p) => refusal(p)));
      expect(outcomes).to.deep.equal(['admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'admitted']);
      expect(codes.filter((c) => c === '40P01'), 'deadlocks detected').to.deep.equal([]);
    } finally {
      proto.query = query;
      for (const c of holders) await c.end();
    }
  });
});
