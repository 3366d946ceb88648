/**
 * The projector runner: exactly-once effect through dedup and checkpoint in one
 * transaction, dead letters for poison entries, reclaim of a dead consumer's entries.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { appendEvents, appendRaw } from '../../infra/redis/event-stream.js';
import { serializeEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { startProjection, type RunnerOptions } from '../../projections/runner/runner.js';
import type { Projection } from '../../projections/runner/projection.js';
import { createRedis, type Redis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { waitFor } from '../support/process.js';
import { syntheticEvents } from '../support/synthetic-events.js';

const opts: RunnerOptions = { batchSize: 200, blockMs: 100, maxAttempts: 3, claimIdleMs: 300 };
const logger = createLogger('silent', 'test');

describe('projector runner', () => {
  let env: TestEnv;
  const blockers: ReturnType<typeof createRedis>[] = [];
  const blocking = () => {
    const r = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
    blockers.push(r);
    return r;
  };
  before(async () => { env = await createTestEnv('runner'); });
  after(async () => { for (const b of blockers) b.disconnect(); await env.close(); });
  beforeEach(async () => {
    await env.redis.del(env.keys.events);
    await sql`TRUNCATE events, projection_dedup, projection_checkpoints`.execute(env.db);
  });

  const count = async (table = 'events') =>
    Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(env.db)).rows[0]!.n);

  it('archives each event exactly once, duplicates included, and advances the checkpoint', async () => {
    const events = syntheticEvents(3000, 1);
    await appendRaw(env.redis, env.keys, [...events, ...events.slice(0, 500)].map(serializeEvent));
    const run = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking(), keys: env.keys, logger }, archiveProjection, opts);
    await waitFor(async () => (await count()) === 3000 && (await groupInfo(env.redis, env.keys.events))[0]?.lag === 0, 20_000, 'archive');
    await run.stop();
    expect(await count()).to.equal(3000);
    const cp = await env.db.selectFrom('projection_checkpoints').selectAll().where('projection', '=', 'archive').executeTakeFirstOrThrow();
    expect(cp.last_stream_id).to.not.equal('0-0');
    const info = (await groupInfo(env.redis, env.keys.events))[0]!;
    expect(info.pending).to.equal(0);
  });

  it('sends an unparseable entry and an entry that keeps failing to the dead-letter stream and goes on', async () => {
    await sql`CREATE TABLE IF NOT EXISTS poison_seen (id text PRIMARY KEY)`.execute(env.db);
    const events = syntheticEvents(50, 2);
    const poison = events[10]!;
    const picky: Projection = {
      name: 'picky',
      tables: [{ name: 'poison_seen', orderBy: 'id' }],
      replayable: false,
      async apply(trx, batch) {
        for (const e of batch) {
          if (e.id === poison.id) throw new Error('cannot apply this one');
          await sql`INSERT INTO poison_seen (id) VALUES (${e.id})`.execute(trx);
        }
      },
    };
    await appendRaw(env.redis, env.keys, ['{not json', ...events.map(serializeEvent)]);
    const run = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking(), keys: env.keys, logger }, picky, opts);
    await waitFor(async () => (await env.redis.xlen(env.keys.deadLetters('picky'))) === 2, 20_000, 'two dead letters');
    await waitFor(async () => (await count('poison_seen')) === 49, 20_000, 'the rest applied');
    await run.stop();
    const dead = await env.redis.xrange(env.keys.deadLetters('picky'), '-', '+');
    const errors = dead.map(([, f]) => f[f.indexOf('error') + 1]);
    expect(errors.some((e) => e?.includes('unparseable'))).to.equal(true);
    expect(errors.some((e) => e?.includes('cannot apply this one'))).to.equal(true);
    expect(run.stats().deadLettered).to.equal(2);
  });

  it('parses a backlog\'s next batch as it is read ahead: its unparseable entry is dead-lettered, the rest archived once', async () => {
    // a transaction takes 10 reads of 200 (readsPerTransaction): the second one is read ahead
    const events = syntheticEvents(4500, 5);
    await appendRaw(env.redis, env.keys, [...events.slice(0, 3000).map(serializeEvent), '{not json', ...events.slice(3000).map(serializeEvent)]);
    const ahead: Projection = { ...archiveProjection, name: 'archive-ahead' };
    const run = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking(), keys: env.keys, logger }, ahead, opts);
    await waitFor(async () => (await count()) === 4500 && (await groupInfo(env.redis, env.keys.events))[0]?.lag === 0, 20_000, 'archive');
    await run.stop();
    expect(await env.redis.xlen(env.keys.deadLetters('archive-ahead'))).to.equal(1);
    expect(run.stats()).to.include({ applied: 4500, deadLettered: 1 });
    const archived = await sql<{ id: string }>`SELECT id FROM events ORDER BY seq`.execute(env.db);
    expect(archived.rows.map((r) => r.id)).to.deep.equal(events.map((e) => e.id));
  });

  it('reclaims the pending entries of a consumer that died', async () => {
    const events = syntheticEvents(100, 3);
    await appendEvents(env.redis, env.keys, events);
    // A consumer reads and dies before it acknowledges.
    await env.redis.xgroup('CREATE', env.keys.events, 'archive', '0', 'MKSTREAM');
    await env.redis.xreadgroup('GROUP', 'archive', 'dead-consumer', 'COUNT', 100, 'STREAMS', env.keys.events, '>');
    const run = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking(), keys: env.keys, logger }, archiveProjection, opts);
    await waitFor(async () => (await count()) === 100, 20_000, 'reclaimed entries archived');
    await run.stop();
    expect((await groupInfo(env.redis, env.keys.events))[0]!.pending).to.equal(0);
    // the dead consumer may have committed them without bumping: taken over, they expire every cached answer
    expect(Number(await env.redis.get(env.keys.readEpoch('archive')))).to.be.greaterThan(0);
  });

  /** env.redis, its pipelines (the read-version bumps) refused while `refusals` lasts. */
  const bumpsRefused = (refusals: { left: number }): Redis => new Proxy(env.redis, {
    get(target, prop) {
      if (prop === 'pipeline') {
        return () => {
          if (refusals.left > 0) { refusals.left -= 1; throw new Error('Connection is closed.'); }
          return target.pipeline();
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });

  it('retries a failed read-version bump before it acknowledges the batch', async () => {
    await env.redis.del(env.keys.readVersion('archive'), env.keys.readEpoch('archive'));
    await appendEvents(env.redis, env.keys, syntheticEvents(20, 5));
    const refusals = { left: 2 };
    const run = startProjection({ db: env.db, redis: bumpsRefused(refusals), blockingRedis: blocking(), keys: env.keys, logger }, archiveProjection, opts);
    await waitFor(async () => (await groupInfo(env.redis, env.keys.events))[0]?.lag === 0 && (await groupInfo(env.redis, env.keys.events))[0]?.pending === 0, 20_000, 'acknowledged');
    await run.stop();
    expect(refusals.left).to.equal(0);
    expect(await count()).to.equal(20);
    expect(Number(await env.redis.get(env.keys.readVersion('archive')))).to.be.greaterThan(0);
    expect(await env.redis.get(env.keys.readEpoch('archive'))).to.equal(null); // the keys' versions moved, not every answer's
  });

  it('leaves a batch whose bump keeps failing unacknowledged, and moves the epoch when it comes again', async () => {
    await env.redis.del(env.keys.readVersion('archive'), env.keys.readEpoch('archive'));
    await appendEvents(env.redis, env.keys, syntheticEvents(20, 6));
    const refusals = { left: 5 }; // every try of the first bump
    const run = startProjection({ db: env.db, redis: bumpsRefused(refusals), blockingRedis: blocking(), keys: env.keys, logger }, archiveProjection, opts);
    await waitFor(async () => (await count()) === 20, 20_000, 'committed');
    await waitFor(async () => (await groupInfo(env.redis, env.keys.events))[0]?.pending === 0, 20_000, 'acknowledged once bumped');
    await run.stop();
    expect(await count()).to.equal(20);
    // committed with no bump, then delivered again: nothing new to apply, yet every cached answer expires
    expect(Number(await env.redis.get(env.keys.readEpoch('archive')))).to.be.greaterThan(0);
    expect(await env.redis.xlen(env.keys.deadLetters('archive'))).to.equal(0);
  });

  it('applies the next batch while the one before is acknowledged, and acknowledges the last before it stops', async () => {
    const events = syntheticEvents(3000, 8);
    await appendRaw(env.redis, env.keys, events.map(serializeEvent));
    // acknowledgements answered 300 ms late; each apply notes whether one was under way
    let acking = 0;
    let appliesDuringAck = 0;
    const slowAcks = new Proxy(env.redis, {
      get(target, prop) {
        if (prop === 'xack') {
          return async (...args: Parameters<Redis['xack']>) => {
            acking += 1;
            try {
              await new Promise((r) => setTimeout(r, 300));
              return await target.xack(...args);
            } finally {
              acking -= 1;
            }
          };
        }
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const noting: Projection = {
      ...archiveProjection,
      async apply(trx, batch) {
        if (acking > 0) appliesDuringAck += 1;
        return archiveProjection.apply(trx, batch);
      },
    };
    // batches of 1,000 entries (10 reads of 100 a transaction): three of them
    const run = startProjection({ db: env.db, redis: slowAcks, blockingRedis: blocking(), keys: env.keys, logger }, noting, { ...opts, batchSize: 100 });
    await waitFor(async () => (await count()) === 3000, 20_000, 'archive');
    await run.stop();
    expect(appliesDuringAck).to.be.greaterThan(0);
    expect(run.stats().batches).to.be.greaterThan(1);
    expect((await groupInfo(env.redis, env.keys.events))[0]!.pending).to.equal(0);
    const archived = await sql<{ id: string }>`SELECT id FROM events ORDER BY seq`.execute(env.db);
    expect(archived.rows.map((r) => r.id)).to.deep.equal(events.map((e) => e.id));
  });

  it('retries transient apply failures without dead-lettering the entries', async () => {
    const events = syntheticEvents(20, 4);
    const flaky: Projection = { ...archiveProjection, name: 'flaky-archive' };
    let failures = 0;
    const broken: Projection = {
      ...flaky,
      async apply(trx, batch) {
        if (failures < 3) { failures += 1; throw Object.assign(new Error('connection terminated'), { code: '57P01' }); }
        return flaky.apply(trx, batch);
      },
    };
    await appendEvents(env.redis, env.keys, events);
    const run = startProjection({ db: env.db, redis: env.redis, blockingRedis: blocking(), keys: env.keys, logger }, broken, opts);
    await waitFor(async () => (await count()) === 20, 20_000, 'applied after failures');
    await run.stop();
    // Postgres answered, so failures were charged as attempts, but fewer than maxAttempts per entry.
    expect(await env.redis.xlen(env.keys.deadLetters('flaky-archive'))).to.equal(0);
  });
});

export type { TributaryEvent };
