/**
 * The delivery workers' claim at volume (issue 17's throughput): on an outbox with no
 * statistics yet, a claim reads about as many rows as it takes, not the whole backlog;
 * rows a worker claimed ahead of its slots go back when they wait too long.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { claimDue, type ClaimedDelivery } from '../../commands/webhooks/delivery/outbox-store.js';
import { createReadyQueue } from '../../commands/webhooks/delivery/ready-queue.js';

const BACKLOG = 20_000;

describe('webhooks: claims at volume', function () {
  this.timeout(120_000);
  let env: TestEnv;

  before(async () => { env = await createTestEnv('webhooks_claim'); });
  after(async () => { await env.close(); });

  it('claims in due order reading a few rows, however large the backlog and whatever the statistics say', async () => {
    const now = new Date();
    const hooks = await env.db.insertInto('webhooks')
      .values([0, 1].map((i) => ({ gateway_pubkey: `g${i}`, gateway_account: `a${i}`, endpoint_url: `http://127.0.0.1/${i}`, secret: 's', created_at: now, updated_at: now })))
      .returning('id').execute();
    await sql`
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_name, payload)
      SELECT CASE WHEN n % 2 = 0 THEN ${hooks[0]!.id}::integer ELSE ${hooks[1]!.id}::integer END, 'e' || n, 'PaymentRecord', json_build_object('n', n)
      FROM generate_series(1, ${BACKLOG}) AS n`.execute(env.db);
    // no ANALYZE: a new outbox after a burst, as the bench's
    const read = await env.db.transaction().execute(async (trx) => {
      const rows = await claimDue(trx, 'w1', 50, 15_000);
      const { rows: stats } = await sql<{ read: string }>`
        SELECT pg_stat_get_xact_tuples_returned(t.oid) + pg_stat_get_xact_tuples_fetched(t.oid)
          + (SELECT COALESCE(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0) FROM pg_index i WHERE i.indrelid = t.oid) AS read
        FROM pg_class t WHERE t.oid = 'webhook_deliveries'::regclass`.execute(trx);
      return { rows, read: Number(stats[0]!.read) };
    });
    expect(read.rows.map((r) => r.event_id)).to.deep.equal(Array.from({ length: 50 }, (_, i) => `e${i + 1}`));
    expect(read.read, 'rows read by one claim').to.be.below(1000);
    // the next claim skips the leased rows and takes the following ones
    const next = await claimDue(env.db, 'w2', 5, 15_000);
    expect(next.map((r) => r.event_id)).to.deep.equal(['e51', 'e52', 'e53', 'e54', 'e55']);
  });

  it('hands out claimed rows oldest first, and hands back those that waited past the bound', () => {
    let t = 0;
    const q = createReadyQueue(4, 100, () => t);
    const row = (id: string) => ({ id }) as ClaimedDelivery;
    q.add([row('1'), row('2')]);
    t = 50;
    q.add([row('3')]);
    expect(q.take()?.id).to.equal('1');
    t = 120; // '2' waited 120 ms, '3' 70 ms
    expect(q.take(), 'a stale row is not started').to.equal(undefined);
    expect(q.stale().map((r) => r.id)).to.deep.equal(['2']);
    expect(q.take()?.id).to.equal('3');
    expect(q.size()).to.equal(0);
    q.add([row('4'), row('5')]);
    expect(q.drain().map((r) => r.id)).to.deep.equal(['4', '5']);
    expect(q.size()).to.equal(0);
  });
});
