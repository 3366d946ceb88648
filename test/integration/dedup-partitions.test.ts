/**
 * projection_dedup is partitioned by projection (migration 0999): every read model's set
 * lives in a partition of its own, a replay empties only its own (TRUNCATE), and a model
 * the migration did not know gets its partition at its first replay, with the rows it
 * had in the default partition moved, not lost.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { statsProjection } from '../../projections/stats/projection.js';
import { replayProjection } from '../../projections/replay.js';
import { PLAIN_DEDUP_MIN, dedupPartition, filterNew } from '../../projections/runner/checkpoint.js';
import type { Projection } from '../../projections/runner/projection.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { makeEvents } from '../support/anchor-events.js';
import { projectionDigest } from '../../projections/replay.js';

describe('dedup partitions', () => {
  let env: TestEnv;
  const events = syntheticEvents(3000, 1);
  before(async () => {
    env = await createTestEnv('dedup_partitions');
    await env.db.transaction().execute((trx) => archiveProjection.apply(trx, events));
  });
  after(async () => { await env?.close(); });

  const partitionRows = async () => {
    const r = await sql<{ part: string; projection: string; n: string }>`
      SELECT tableoid::regclass::text AS part, projection, count(*) AS n FROM projection_dedup GROUP BY 1, 2 ORDER BY 1, 2`.execute(env.db);
    return r.rows.map((x) => ({ part: x.part, projection: x.projection, n: Number(x.n) }));
  };

  it('gives every read model that keeps a dedup set a partition of its own', async () => {
    const parts = await sql<{ name: string; bound: string }>`
      SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'projection_dedup'::regclass`.execute(env.db);
    const byName = new Map(parts.rows.map((p) => [p.name, p.bound]));
    expect(byName.get('projection_dedup_default')).to.equal('DEFAULT');
    for (const p of PROJECTIONS.filter((x) => !x.selfDeduplicating)) {
      expect(byName.get(dedupPartition(p.name)), p.name).to.equal(`FOR VALUES IN ('${p.name}')`);
    }
  });

  it('a replay empties and refills only its own partition; live duplicates are still absorbed', async () => {
    await env.db.transaction().execute(async (trx) => {
      await filterNew(trx, 'payments', events.slice(0, 10));
      await filterNew(trx, 'someone-else', events.slice(0, 7));
    });
    await replayProjection(env.db, statsProjection, { waitMs: 1000 });
    const rows = await partitionRows();
    expect(rows).to.deep.include({ part: dedupPartition('payment-stats'), projection: 'payment-stats', n: 3000 });
    expect(rows).to.deep.include({ part: dedupPartition('payments'), projection: 'payments', n: 10 });
    expect(rows).to.deep.include({ part: 'projection_dedup_default', projection: 'someone-else', n: 7 });
    const fresh = await env.db.transaction().execute((trx) => filterNew(trx, 'payment-stats', [...events.slice(2990), ...syntheticEvents(5, 1, 3000)]));
    expect(fresh).to.have.length(5);
  });

  it('a large batch is kept whole when new, and filtered per row when some of it was applied before', async () => {
    const ids = (xs: readonly { id: string }[]) => xs.map((x) => x.id);
    const batch = syntheticEvents(PLAIN_DEDUP_MIN * 3, 2);
    const first = await env.db.transaction().execute((trx) => filterNew(trx, 'gateways', [...batch.slice(0, 100), ...batch.slice(0, 10)]));
    expect(ids(first)).to.deep.equal(ids(batch.slice(0, 100)));
    // the plain insert fails on the 100 applied, the savepoint undoes it, the per-row path keeps the rest
    const second = await env.db.transaction().execute((trx) => filterNew(trx, 'gateways', batch));
    expect(ids(second)).to.deep.equal(ids(batch.slice(100)));
    const n = await sql<{ n: string }>`SELECT count(*) AS n FROM projection_dedup WHERE projection = 'gateways'`.execute(env.db);
    expect(Number(n.rows[0]!.n)).to.equal(batch.length);
    // a batch below the threshold takes the per-row path at once
    const small = await env.db.transaction().execute((trx) => filterNew(trx, 'gateways', [...batch.slice(0, 3), ...syntheticEvents(2, 3)]));
    expect(small).to.have.length(2);
  });

  it('a model the migration did not know gets its partition at its first replay, its rows moved from the default', async () => {
    const late: Projection = { ...statsProjection, name: 'late-model' };
    await env.db.transaction().execute((trx) => filterNew(trx, 'late-model', events.slice(0, 50)));
    expect(await partitionRows()).to.deep.include({ part: 'projection_dedup_default', projection: 'late-model', n: 50 });
    // the partition exists before the replay's transaction: a failed replay keeps the set
    const failing: Projection = { ...late, apply: async () => { throw new Error('boom'); } };
    await replayProjection(env.db, failing, { waitMs: 1000 }).then(() => expect.fail('should fail'), (err: Error) => expect(err.message).to.equal('boom'));
    expect(await partitionRows()).to.deep.include({ part: dedupPartition('late-model'), projection: 'late-model', n: 50 });
    await replayProjection(env.db, late, { waitMs: 1000 });
    const rows = await partitionRows();
    expect(rows).to.deep.include({ part: dedupPartition('late-model'), projection: 'late-model', n: 3000 });
    expect(rows.filter((r) => r.projection === 'late-model')).to.have.length(1);
  });

  it('keeps the events a model\'s rows absorb out of its set: a payment delivered again changes nothing, a policy creation is filtered', async () => {
    const absorbed = paymentsProjection.absorbs!.names;
    const mix = makeEvents(400, { seed: 'absorb', kinds: ['PaymentRecord', 'ComposablePolicyCreated', 'ComposableExecuted', 'PaymentGatewayCreated'] });
    const applyOnce = (batch: typeof mix) => env.db.transaction().execute(async (trx) => {
      const fresh = await filterNew(trx, 'payments', batch, absorbed);
      if (fresh.length > 0) await paymentsProjection.apply(trx, fresh);
      return fresh;
    });
    await env.db.transaction().execute((trx) => archiveProjection.apply(trx, mix));
    const first = await applyOnce([...mix, ...mix.slice(0, 5)]);
    expect(first.map((e) => e.id)).to.deep.equal(mix.map((e) => e.id));
    const set = await sql<{ name: string }>`
      SELECT e.name FROM projection_dedup d JOIN events e ON e.id = d.event_id WHERE d.projection = 'payments' AND e.id = ANY(${mix.map((e) => e.id)}::text[])`.execute(env.db);
    const others = mix.filter((e) => !absorbed.includes(e.name));
    expect(set.rows).to.have.length(others.length);
    expect(set.rows.every((r) => !absorbed.includes(r.name as never))).to.equal(true);
    const model = await projectionDigest(env.db, paymentsProjection);
    // delivered again: the payments pass (their rows absorb them), the rest is filtered out
    const again = await applyOnce(mix);
    expect(again.map((e) => e.name)).to.deep.equal(mix.filter((e) => absorbed.includes(e.name)).map((e) => e.name));
    expect(await projectionDigest(env.db, paymentsProjection)).to.equal(model);
    const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM payments WHERE event_id = ANY(${mix.map((e) => e.id)}::text[])`.execute(env.db);
    expect(Number(rows.rows[0]!.n)).to.equal(mix.length - others.length);
  });

  it('a replay of a model whose rows absorb events waits for the archive to hold every one of its rows', async () => {
    const [unarchived] = syntheticEvents(1, 77);
    await env.db.transaction().execute((trx) => paymentsProjection.apply(trx, [unarchived!]));
    const err = await replayProjection(env.db, paymentsProjection, { waitMs: 300 }).then(() => undefined, (e: Error) => e);
    expect(err?.message).to.match(/archive is behind payments/);
    await env.db.transaction().execute((trx) => archiveProjection.apply(trx, [unarchived!]));
    const r = await replayProjection(env.db, paymentsProjection, { waitMs: 300 });
    const set = await sql<{ n: string }>`
      SELECT count(*) AS n FROM projection_dedup d JOIN events e ON e.id = d.event_id WHERE d.projection = 'payments' AND e.name = ANY(${paymentsProjection.absorbs!.names}::text[])`.execute(env.db);
    expect(Number(set.rows[0]!.n)).to.equal(0);
    expect(r.events).to.be.greaterThan(0);
  });
});
