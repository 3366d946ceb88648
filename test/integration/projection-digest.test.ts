/**
 * The digest of a read model (projections/replay.ts projectionDigest): equal for equal
 * rows whatever their physical order, different when one value of one row changes, when
 * a row goes or comes twice; blind to the columns a table names as volatile only.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { makeEvents } from '../support/anchor-events.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { projectionDigest } from '../../projections/replay.js';
import type { Projection } from '../../projections/runner/projection.js';
import { project } from './readmodels-scenario.js';

describe('read model digest', function () {
  this.timeout(60_000);
  let env: TestEnv;
  before(async () => {
    env = await createTestEnv('projection_digest');
    await project(env, [archiveProjection, paymentsProjection], makeEvents(400, { seed: 'digest' }), 100);
  });
  after(async () => { await env?.close(); });

  const digest = (p: Projection = paymentsProjection) => projectionDigest(env.db, p);
  const one = async () => (await sql<{ event_id: string }>`SELECT event_id FROM payments ORDER BY event_id LIMIT 1`.execute(env.db)).rows[0]!.event_id;

  it('is the same for the same rows in another physical order', async () => {
    const before = await digest();
    // every row rewritten, in reverse key order: each lands on a new place in the heap
    await sql`UPDATE payments SET amount = amount WHERE event_id IN (SELECT event_id FROM payments ORDER BY event_id DESC)`.execute(env.db);
    await sql`CLUSTER payments USING payments_policy_idx`.execute(env.db);
    expect(await digest()).to.equal(before);
  });

  it('changes with one value of one row, and comes back with it', async () => {
    const before = await digest();
    const id = await one();
    const was = (await sql<{ amount: string; tracking_id: string | null }>`SELECT amount, tracking_id FROM payments WHERE event_id = ${id}`.execute(env.db)).rows[0]!;
    await sql`UPDATE payments SET amount = amount + 1 WHERE event_id = ${id}`.execute(env.db);
    const changed = await digest();
    expect(changed).to.not.equal(before);
    await sql`UPDATE payments SET tracking_id = ${was.tracking_id === null ? 'x' : null} WHERE event_id = ${id}`.execute(env.db);
    expect(await digest()).to.not.equal(changed);
    await sql`UPDATE payments SET amount = ${was.amount}::numeric, tracking_id = ${was.tracking_id} WHERE event_id = ${id}`.execute(env.db);
    expect(await digest()).to.equal(before);
  });

  it('changes when a row goes, and when one is there twice', async () => {
    const before = await digest();
    const id = await one();
    await sql`CREATE TEMP TABLE kept AS SELECT * FROM payments WHERE event_id = ${id}`.execute(env.db);
    try {
      await sql`DELETE FROM payments WHERE event_id = ${id}`.execute(env.db);
      expect(await digest()).to.not.equal(before);
      // twice: the key dropped for a moment, as a table without it could hold
      await sql`ALTER TABLE payments DROP CONSTRAINT payments_pkey`.execute(env.db);
      await sql`INSERT INTO payments SELECT * FROM kept`.execute(env.db);
      await sql`INSERT INTO payments SELECT * FROM kept`.execute(env.db);
      const twice = await digest();
      expect(twice).to.not.equal(before);
      await sql`DELETE FROM payments WHERE event_id = ${id}`.execute(env.db);
      await sql`INSERT INTO payments SELECT * FROM kept`.execute(env.db);
      await sql`ALTER TABLE payments ADD CONSTRAINT payments_pkey PRIMARY KEY (event_id)`.execute(env.db);
      expect(await digest()).to.equal(before);
    } finally {
      await sql`DROP TABLE IF EXISTS kept`.execute(env.db);
    }
  });

  it('leaves out the columns a table names as volatile, and only those', async () => {
    const before = await digest(archiveProjection);
    await sql`UPDATE events SET seq = seq + 1000000`.execute(env.db);
    expect(await digest(archiveProjection)).to.equal(before);
    await sql`UPDATE events SET slot = slot + 1 WHERE id = (SELECT min(id) FROM events)`.execute(env.db);
    expect(await digest(archiveProjection)).to.not.equal(before);
  });
});
