/**
 * Compiled SQL kept per shape (infra/postgres/compiled-shapes.ts): for the list routes'
 * queries, the kept form with a request's values in place is the very query kysely
 * compiles for that request, text and parameters, on the first request of a shape and on
 * every later one; a builder that computes from a value is never kept.
 */
import { expect } from 'chai';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { compileShaped } from '../../infra/postgres/compiled-shapes.js';
import { policiesQuery } from '../../queries/policies/policy-rows.js';
import { executionsQuery } from '../../queries/policies/executions.js';
import { eventsQuery, type EventWhere } from '../../queries/events/events-query.js';
import type { PolicyFilter } from '../../queries/policies/filters.js';

const db = new Kysely<never>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
}) as unknown as Db;

const same = (a: { sql: string; parameters: readonly unknown[] }, b: { sql: string; parameters: readonly unknown[] }) => {
  expect(a.sql).to.equal(b.sql);
  expect(a.parameters).to.deep.equal(b.parameters);
};

describe('compiled SQL per shape', () => {
  it('gives a policy list\'s query for each filter combination, first and later requests alike', () => {
    const filters: PolicyFilter[] = [
      { gateway: 'G1', tokenMint: 'M', defaultMint: true, userPayments: [], subscriptionsOnly: true },
      { gateway: 'G2', tokenMint: 'M', defaultMint: true, userPayments: [], subscriptionsOnly: true },
      { gateway: 'G2', tokenMint: 'N', defaultMint: false, userPayments: [], subscriptionsOnly: false },
      { recipient: 'R', tokenMint: 'M', defaultMint: true, userPayments: ['U1', 'U2'], subscriptionsOnly: false },
      { memo: Buffer.from('order-1'), owner: 'O', tokenMint: 'M', defaultMint: true, userPayments: ['U3'], subscriptionsOnly: false },
      { memo: Buffer.from('order-2'), owner: 'P', tokenMint: 'M', defaultMint: true, userPayments: ['U4'], subscriptionsOnly: false },
    ];
    for (const kind of ['payment', 'composable'] as const) {
      for (const [i, f] of filters.entries()) {
        const page = { limit: 10 + i, offset: i };
        same(compileShaped(`policies:${kind}`, { f, page }, (a) => policiesQuery(db, kind, a.f, a.page)), policiesQuery(db, kind, f, page).compile());
      }
    }
  });

  it('gives executions\' and events\' queries, with values repeated and shapes told apart', () => {
    for (const policy of ['A', 'B', 'A']) {
      const page = { limit: 5, offset: 5 };
      same(compileShaped('executions:payment', { policy, page }, (a) => executionsQuery(db, 'payment', a.policy, a.page)), executionsQuery(db, 'payment', policy, page).compile());
    }
    const wheres: EventWhere[] = [
      { name: 'PaymentRecord' }, { name: 'PaymentPolicyCreated' }, { slot: 12 }, { slot: 13 },
      { memos: [Buffer.from('a'), Buffer.from('b')] }, { memos: [Buffer.from('c')] }, { minSlot: 1, maxSlot: 9 }, { maxSlot: 3 }, {},
    ];
    for (const where of wheres) {
      const page = { limit: 100, offset: 0 };
      same(compileShaped('events', { where, page }, (a) => eventsQuery(db, a.where, a.page)), eventsQuery(db, where, page).compile());
    }
  });

  it('never keeps a shape whose builder computes from a value', () => {
    const build = (a: { n: number }) => db.selectNoFrom(sql<number>`${sql.lit(a.n + 1)}`.as('x'));
    for (const n of [1, 2]) same(compileShaped('computes', { n }, build), build({ n }).compile());
    const dropped = (a: { n: number; m: number }) => db.selectNoFrom(sql<number>`${a.n}`.as('x'));
    for (const n of [1, 2]) same(compileShaped('drops', { n, m: n }, dropped), dropped({ n, m: n }).compile());
  });
});
