/**
 * The events API over a real archive: 10,000 Anchor-encoded events of all 19 kinds, with
 * duplicates, go through the stream and the archive projection; then every endpoint
 * returns exactly what its filters select, newest first.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { waitFor } from '../support/process.js';
import { appendTestEvents, makeEvent, makeEvents, randomPubkey, trackingIdMemo, uniqueEvents, U64_MAX, BASE_TIME } from '../support/anchor-events.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { startProjection } from '../../projections/runner/runner.js';
import { findProjection } from '../../projections/registry.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { createPrng } from '../../infra/localnet/prng.js';
import { EVENT_NAMES } from '../../src/kernel/events/catalog.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { KIND_ROUTES } from '../../queries/events/kind-routes.js';
import type { ApiEvent } from '../../queries/events/events-query.js';
import { dataOf } from '../support/anchor-events.js';

const rng = createPrng('events-api');
const GW = randomPubkey(rng);
const PP = randomPubkey(rng);
const TRACK = 'order-42';

/** Events with chosen keys, at slots above the random ones, each its own transaction. */
function targeted(): TributaryEvent[] {
  let slot = 900_000;
  const at = (name: Parameters<typeof makeEvent>[0], fields: Record<string, unknown>) => {
    slot += 10;
    return makeEvent(name, fields, { seed: `t${slot}`, slot, blockTime: BASE_TIME + slot, ixPath: '0', index: 0 });
  };
  return [
    at('PaymentRecord', { gateway: GW, payment_policy: PP, amount: U64_MAX.toString() }),
    at('PaymentRecord', { gateway: GW, payment_policy: PP, amount: U64_MAX.toString(), memo: trackingIdMemo(TRACK) }),
    at('PaymentRecord', { gateway: GW, amount: '1' }),
    at('PaymentRecord', { gateway: GW, amount: '0', memo: 'order-420' }),
    at('PaymentPolicyCreated', { gateway: GW, memo: TRACK }),
    at('ComposablePolicyCreated', { gateway: GW, memo: trackingIdMemo(TRACK, 32) }),
  ];
}

/** A transaction with three events: signature mode answers the first of them. */
function threeInOneTx(): TributaryEvent[] {
  const signature = makeEvent('PaymentRecord', {}, 'sig').signature;
  return (['UserPaymentCreated', 'PaymentPolicyCreated', 'PaymentRecord'] as const)
    .map((n, index) => makeEvent(n, {}, { seed: `tx${index}`, signature, slot: 950_000, blockTime: BASE_TIME + 950_000, ixPath: String(index), index }));
}

describe('events API over the archive', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let api: TestApi;
  let all: TributaryEvent[]; // unique events in stream order, as the archive assigns seq
  const blocking: ReturnType<typeof createRedis>[] = [];

  const get = async <T = ApiEvent[]>(path: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${api.url}${path}`);
    return { status: res.status, body: (await res.json()) as T };
  };
  const ids = (list: { id: string }[]) => list.map((e) => e.id);
  /** the API's order: slot DESC, then arrival DESC */
  const newest = (list: TributaryEvent[]) => list.map((e, i) => ({ e, i })).sort((a, b) => b.e.slot - a.e.slot || b.i - a.i).map((x) => x.e);
  const expectIds = (list: TributaryEvent[], limit = 100, offset = 0) => newest(list).slice(offset, offset + limit).map((e) => e.id);

  before(async () => {
    env = await createTestEnv('events-api');
    const random = makeEvents(10_000 - 9, { seed: 11, duplicates: 0.15, nullBlockTime: 0.02 });
    const stream = [...random.slice(0, 5000), ...targeted(), ...random.slice(5000), ...threeInOneTx(), ...random.slice(0, 300)];
    all = uniqueEvents(stream);
    expect(all.length).to.equal(10_000);
    await appendTestEvents(env, stream);
    // The archive, and the payments and stats models that /payments/stats reads.
    const projections = [archiveProjection, findProjection('payments')!, findProjection('payment-stats')!];
    const runs = projections.map((p) => {
      const conn = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
      blocking.push(conn);
      return startProjection({ db: env.db, redis: env.redis, blockingRedis: conn, keys: env.keys, logger: createLogger('silent', 'test') },
        p, { batchSize: 1000, blockMs: 100, maxAttempts: 3, claimIdleMs: 5000 });
    });
    await waitFor(async () => {
      const groups = await groupInfo(env.redis, env.keys.events);
      return projections.every((p) => { const g = groups.find((x) => x.name === p.name); return g?.lag === 0 && g.pending === 0; });
    }, 90_000, 'projections to catch up');
    for (const r of runs) await r.stop();
    api = await startTestApi(env);
  });
  after(async () => {
    await api?.close();
    for (const b of blocking) b.disconnect();
    await env?.close();
  });

  it('archives exactly the unique set, with the decoded fields', async () => {
    const rows = await env.db.selectFrom('events').select(['id', 'data']).orderBy('seq').execute();
    expect(rows.map((r) => r.id)).to.deep.equal(all.map((e) => e.id));
    const byId = new Map(all.map((e) => [e.id, e]));
    for (const r of rows) expect(r.data).to.deep.equal(byId.get(r.id)!.data);
    const names = (await sql<{ name: string }>`SELECT DISTINCT name FROM events`.execute(env.db)).rows.map((r) => r.name);
    expect(names.sort()).to.deep.equal([...EVENT_NAMES].sort());
  });

  it('signature: the first event of the transaction, as a bare object; 404 when none', async () => {
    const tx = all.filter((e) => e.slot === 950_000);
    const { status, body } = await get<ApiEvent>(`/v1/events?signature=${tx[0]!.signature}`);
    expect(status).to.equal(200);
    expect(body).to.deep.include({ id: tx[0]!.id, name: 'UserPaymentCreated', slot: 950_000, blockTime: BASE_TIME + 950_000, ixPath: '0', index: 0 });
    expect(body.timestamp).to.equal(new Date((BASE_TIME + 950_000) * 1000).toISOString());
    expect(body.data).to.deep.equal(tx[0]!.data);
    const missing = await get(`/v1/events?signature=${makeEvent('PaymentRecord', {}, 'nowhere').signature}`);
    expect(missing.status).to.equal(404);
    expect(missing.body).to.include({ success: false, code: 'not_found' });
  });

  it('slot: the events of that slot', async () => {
    const slot = all[4321]!.slot;
    const { body } = await get(`/v1/events?slot=${slot}`);
    expect(ids(body)).to.deep.equal(expectIds(all.filter((e) => e.slot === slot)));
    expect(body.length).to.be.greaterThan(0);
  });

  it('trackingId: matched through the 64-byte and the 32-byte memo encodings, not by prefix', async () => {
    const { body } = await get(`/v1/events?trackingId=${TRACK}`);
    const expected = all.filter((e) => dataOf(e)['memo'] === TRACK);
    expect(expected.map((e) => e.name).sort()).to.deep.equal(['ComposablePolicyCreated', 'PaymentPolicyCreated', 'PaymentRecord']);
    expect(ids(body)).to.deep.equal(expectIds(expected));
  });

  it('eventName: canonical names and SPEC aliases, paginated', async () => {
    const policies = all.filter((e) => e.name === 'PaymentPolicyCreated');
    expect(ids((await get('/v1/events?eventName=PaymentPolicyCreated')).body)).to.deep.equal(expectIds(policies));
    expect(ids((await get('/v1/events?eventName=PolicyCreated&limit=7&offset=3')).body)).to.deep.equal(expectIds(policies, 7, 3));
  });

  it('startTime/endTime: ISO 8601 and unix seconds, inclusive, on the block time', async () => {
    const from = all[2000]!.blockTime ?? BASE_TIME + 1000;
    const to = from + 40;
    const expected = all.filter((e) => e.blockTime !== null && e.blockTime >= from && e.blockTime <= to);
    const iso = (s: number) => new Date(s * 1000).toISOString();
    expect(ids((await get(`/v1/events?startTime=${from}&endTime=${to}&limit=1000`)).body)).to.deep.equal(expectIds(expected, 1000));
    expect(ids((await get(`/v1/events?startTime=${iso(from)}&endTime=${iso(to)}&limit=1000`)).body)).to.deep.equal(expectIds(expected, 1000));
    const onlyStart = all.filter((e) => e.blockTime !== null && e.blockTime >= from);
    expect(ids((await get(`/v1/events?startTime=${from}`)).body)).to.deep.equal(expectIds(onlyStart));
  });

  it('generic search: everything newest first, bounded by minSlot/maxSlot', async () => {
    expect(ids((await get('/v1/events')).body)).to.deep.equal(expectIds(all));
    const lo = all[100]!.slot, hi = all[400]!.slot;
    const expected = all.filter((e) => e.slot >= lo && e.slot <= hi);
    expect(ids((await get(`/v1/events?minSlot=${lo}&maxSlot=${hi}&limit=1000`)).body)).to.deep.equal(expectIds(expected, 1000));
  });

  it('applies one filter mode, in priority order: signature, slot, trackingId, eventName, time', async () => {
    const e = all[777]!;
    const other = all[9000]!;
    const bySig = await get<ApiEvent>(`/v1/events?signature=${e.signature}&slot=${other.slot}&eventName=GatewayCreated`);
    expect(bySig.body.signature).to.equal(e.signature);
    const bySlot = await get(`/v1/events?slot=${other.slot}&trackingId=${TRACK}&eventName=PaymentRecord`);
    expect(ids(bySlot.body)).to.deep.equal(expectIds(all.filter((x) => x.slot === other.slot)));
    const byTrack = await get(`/v1/events?trackingId=${TRACK}&eventName=UserPaymentDeleted&startTime=0`);
    expect(ids(byTrack.body)).to.deep.equal(expectIds(all.filter((x) => dataOf(x)['memo'] === TRACK)));
    const byName = await get(`/v1/events?eventName=ProgramAuthorityChanged&startTime=${BASE_TIME + 900_000}&minSlot=1`);
    expect(ids(byName.body)).to.deep.equal(expectIds(all.filter((x) => x.name === 'ProgramAuthorityChanged')));
    const byTime = await get(`/v1/events?startTime=${BASE_TIME + 900_000}&minSlot=999999999`);
    expect(ids(byTime.body)).to.deep.equal(expectIds(all.filter((x) => x.blockTime !== null && x.blockTime >= BASE_TIME + 900_000)));
  });

  it('count: all filters combined', async () => {
    expect((await get('/v1/events/count')).body).to.deep.equal({ count: 10_000 });
    const from = BASE_TIME + 2000, to = BASE_TIME + 6000;
    const expected = all.filter((e) => e.name === 'PaymentRecord' && e.blockTime !== null && e.blockTime >= from && e.blockTime <= to).length;
    expect((await get(`/v1/events/count?eventName=PaymentRecord&startTime=${from}&endTime=${to}`)).body).to.deep.equal({ count: expected });
  });

  it('names: the indexed ones and the 19 canonical ones', async () => {
    expect((await get('/v1/events/names')).body).to.deep.equal([...EVENT_NAMES].sort());
    expect((await get('/v1/events/names/tributary')).body).to.deep.equal([...EVENT_NAMES]);
  });

  it('payment stats: count and exact volume, by gateway and time', async () => {
    const sum = (l: TributaryEvent[]) => l.reduce((s, e) => s + BigInt(dataOf(e)['amount'] as string), 0n).toString();
    const pays = all.filter((e) => e.name === 'PaymentRecord');
    expect((await get('/v1/events/payments/stats')).body).to.deep.equal({ count: pays.length, volume: sum(pays) });
    const gw = pays.filter((e) => e.data['gateway'] === GW);
    expect((await get(`/v1/events/payments/stats?gateway=${GW}`)).body).to.deep.equal({ count: 4, volume: (2n * U64_MAX + 1n).toString() });
    const late = gw.filter((e) => e.blockTime! <= BASE_TIME + 900_025);
    expect((await get(`/v1/events/payments/stats?gateway=${GW}&startTime=0&endTime=${BASE_TIME + 900_025}`)).body)
      .to.deep.equal({ count: late.length, volume: sum(late) });
  });

  it('per-kind lists: each filter selects its kind and key, newest first', async () => {
    for (const r of KIND_ROUTES) {
      const kind = all.filter((e) => e.name === r.name);
      expect(ids((await get(r.path)).body), r.path).to.deep.equal(expectIds(kind));
      for (const [param, field] of Object.entries(r.filters)) {
        const value = dataOf(kind.find((e) => dataOf(e)[field] === GW) ?? kind[kind.length - 1]!)[field] as string;
        const { body } = await get(`${r.path}?${param}=${value}&limit=1000`);
        expect(ids(body), `${r.path}?${param}`).to.deep.equal(expectIds(kind.filter((e) => dataOf(e)[field] === value), 1000));
        expect(body.length).to.be.greaterThan(0);
      }
    }
    const both = await get(`/v1/events/payments?gateway=${GW}&paymentPolicy=${PP}`);
    expect(both.body.map((e) => e.data['amount'])).to.deep.equal([U64_MAX.toString(), U64_MAX.toString()]);
  });

  it('typed: one kind by canonical name or alias, data as the codec decoded it', async () => {
    const kind = all.filter((e) => e.name === 'ReferralRewardDistributedRecord');
    const { body } = await get('/v1/events/typed/ReferralRewardDistributed?limit=5');
    expect(ids(body)).to.deep.equal(expectIds(kind, 5));
    expect(body[0]!.data).to.deep.equal(kind.find((e) => e.id === body[0]!.id)!.data);
    expect(ids((await get('/v1/events/typed/PaymentGatewayCreated')).body)).to.deep.equal(expectIds(all.filter((e) => e.name === 'PaymentGatewayCreated')));
  });
});
