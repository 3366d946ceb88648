/**
 * Replay into fresh tables (replay-fresh.ts): every replayable model is rebuilt in new
 * tables swapped in at the end, to the rows, indexes and constraints a live build has;
 * readers are served the old model while the replay runs; a replay that fails midway
 * leaves the old tables as they were and nothing of the new ones.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { makeEvents } from '../support/anchor-events.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { freshSchema } from '../../projections/replay-fresh.js';
import type { Projection } from '../../projections/runner/projection.js';
import { createDb } from '../../infra/postgres/database.js';
import { project } from './readmodels-scenario.js';

const REPLAYABLE = PROJECTIONS.filter((p) => p.replayable);

describe('replay into fresh tables', function () {
  this.timeout(120_000);
  let env: TestEnv;
  before(async () => {
    env = await createTestEnv('replay_fresh');
    await project(env, [archiveProjection, ...REPLAYABLE], makeEvents(2000, { seed: 'fresh', duplicates: 0.05, nullBlockTime: 0.1 }), 200);
  });
  after(async () => { await env?.close(); });

  /** every table's indexes and constraints, by name, as Postgres prints them */
  const shape = async (p: Projection) => {
    const r = await sql<{ t: string; what: string }>`
      SELECT c.relname AS t, pg_get_indexdef(i.indexrelid) AS what FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
      WHERE c.relname = ANY(${p.tables.map((t) => t.name)}::text[]) AND c.relnamespace = 'public'::regnamespace
      UNION ALL
      SELECT c.relname, k.conname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
      WHERE c.relname = ANY(${p.tables.map((t) => t.name)}::text[]) AND c.relnamespace = 'public'::regnamespace
      ORDER BY 1, 2`.execute(env.db);
    return r.rows;
  };

  it('rebuilds every replayable model in fresh tables: the live build\'s rows, indexes and constraints', async () => {
    for (const p of REPLAYABLE) {
      const live = await projectionDigest(env.db, p);
      const before = await shape(p);
      expect(before.length, p.name).to.be.greaterThan(p.tables.length - 1);
      const r = await replayProjection(env.db, p, { waitMs: 5000 });
      expect(r.steps.fresh, p.name).to.equal(true);
      expect(r.digest, p.name).to.equal(live);
      expect(await shape(p), p.name).to.deep.equal(before);
    }
    const left = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'replay\\_%'`.execute(env.db);
    expect(Number(left.rows[0]!.n)).to.equal(0);
  });

  it('defers only indexes that exist (a misspelt name would silently defer nothing)', async () => {
    let named = 0;
    for (const p of REPLAYABLE) {
      for (const t of p.tables) {
        for (const ix of t.deferredIndexes ?? []) {
          const r = await sql<{ n: string }>`
            SELECT count(*) AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE c.relname = ${ix} AND i.indrelid = ${t.name}::regclass`.execute(env.db);
          expect(Number(r.rows[0]!.n), `${t.name}.${ix}`).to.equal(1);
          named += 1;
        }
      }
    }
    expect(named).to.be.greaterThan(0);
  });

  it('fails a replay whose rows break a unique index built after them, and leaves the old model', async () => {
    const before = await projectionDigest(env.db, paymentsProjection);
    expect(paymentsProjection.tables.find((t) => t.name === 'payments')!.deferredIndexes).to.include('payments_pkey');
    // each page's first payment written twice: the primary key, deferred, is not there to refuse it
    const twice: Projection = {
      ...paymentsProjection,
      async apply(trx, events) {
        const result = await paymentsProjection.apply(trx, events);
        await sql`INSERT INTO payments SELECT * FROM payments ORDER BY event_id LIMIT 1`.execute(trx);
        return result;
      },
    };
    const err = await replayProjection(env.db, twice, { waitMs: 5000 }).then(() => undefined, (e: Error) => e);
    expect(err?.message).to.match(/could not create unique index "payments_pkey"/);
    expect(await projectionDigest(env.db, paymentsProjection)).to.equal(before);
    const pk = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_constraint WHERE conname = 'payments_pkey' AND conrelid = 'public.payments'::regclass`.execute(env.db);
    expect(Number(pk.rows[0]!.n)).to.equal(1);
  });

  it('reads the next page on another connection while a page is applied, or on its own when the pool has no other', async () => {
    for (const p of REPLAYABLE) {
      const live = await projectionDigest(env.db, p);
      const paged = await replayProjection(env.db, p, { waitMs: 5000, page: 150 });
      expect(paged.digest, `${p.name} in pages of 150`).to.equal(live);
    }
    const single = createDb(env.dbUrl, 1, 'replay-fresh-single');
    try {
      const r = await replayProjection(single, paymentsProjection, { waitMs: 5000, page: 150 });
      expect(r.digest).to.equal(await projectionDigest(env.db, paymentsProjection));
    } finally {
      await single.destroy();
    }
  });

  it('serves reads of the old model while the replay runs, and the new one after', async () => {
    const reader = createDb(env.dbUrl, 2, 'replay-fresh-reader', { namedStatements: true });
    try {
      const count = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM payments`.execute(reader)).rows[0]!.n);
      const rows = await count();
      await sql`DELETE FROM payments WHERE event_id IN (SELECT event_id FROM payments ORDER BY event_id LIMIT 5)`.execute(env.db);
      let release!: () => void;
      const gate = new Promise<void>((r) => { release = r; });
      let entered!: () => void;
      const inside = new Promise<void>((r) => { entered = r; });
      const slow: Projection = { ...paymentsProjection, async apply(trx, events) { entered(); await gate; return paymentsProjection.apply(trx, events); } };
      const replay = replayProjection(env.db, slow, { waitMs: 5000 });
      await inside;
      const t0 = Date.now();
      expect(await count()).to.equal(rows - 5);
      expect(Date.now() - t0).to.be.lessThan(2000);
      release();
      await replay;
      expect(await count()).to.equal(rows);
    } finally {
      await reader.destroy();
    }
  });

  it('leaves the old tables as they were when the replay fails midway', async () => {
    const before = await projectionDigest(env.db, paymentsProjection);
    const shapeBefore = await shape(paymentsProjection);
    let pages = 0;
    const failing: Projection = {
      ...paymentsProjection,
      async apply(trx, events) {
        await paymentsProjection.apply(trx, events);
        pages += 1;
        throw new Error('crash mid-replay');
      },
    };
    const err = await replayProjection(env.db, failing, { waitMs: 5000 }).then(() => undefined, (e: Error) => e);
    expect(err?.message).to.equal('crash mid-replay');
    expect(pages).to.equal(1);
    expect(await projectionDigest(env.db, paymentsProjection)).to.equal(before);
    expect(await shape(paymentsProjection)).to.deep.equal(shapeBefore);
    const schema = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_namespace WHERE nspname = ${freshSchema(paymentsProjection.name)}`.execute(env.db);
    expect(Number(schema.rows[0]!.n)).to.equal(0);
    const dedup = await sql<{ n: string }>`SELECT count(*) AS n FROM projection_dedup WHERE projection = 'payments'`.execute(env.db);
    expect(Number(dedup.rows[0]!.n)).to.be.greaterThan(0);
  });
});
