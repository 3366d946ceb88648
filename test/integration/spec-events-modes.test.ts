/**
 * SPEC.md "Filter rules for GET /v1/events", to the letter: "exactly one filter mode
 * applies per request, chosen in this priority order: signature, then slot, then
 * trackingId, then eventName, then startTime/endTime". The parameters of a mode that does
 * not apply are ignored, not checked against each other (a reversed time range next to a
 * signature is no 400); a parameter malformed in itself is still a 400. A small archive
 * built by the real archive projection from the stream.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { waitFor } from '../support/process.js';
import { appendTestEvents, BASE_TIME, makeEvent, trackingIdMemo } from '../support/anchor-events.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { startProjection } from '../../projections/runner/runner.js';
import { groupInfo } from '../../infra/redis/group-lag.js';
import { createRedis } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import type { ApiEvent } from '../../queries/events/events-query.js';

const TRACK = 'order-77';
const REVERSED_TIME = `startTime=${BASE_TIME + 5000}&endTime=${BASE_TIME + 1000}`;
const REVERSED_SLOTS = 'minSlot=900&maxSlot=100';

describe('SPEC Filter rules for GET /v1/events: exactly one filter mode applies per request', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;
  const at = (slot: number, name: Parameters<typeof makeEvent>[0], fields: Record<string, unknown> = {}) =>
    makeEvent(name, fields, { seed: `m${slot}`, slot, blockTime: BASE_TIME + slot, ixPath: '0', index: 0 });
  const events = [
    at(100, 'PaymentRecord', { memo: trackingIdMemo(TRACK) }),
    at(200, 'GatewaySignerChanged'),
    at(300, 'PaymentRecord'),
    at(400, 'EmergencyPauseChanged'),
  ];
  const [tracked, gateway, record, status] = events as [typeof events[0], typeof events[0], typeof events[0], typeof events[0]];

  const get = async (path: string) => {
    const res = await fetch(`${api.url}${path}`);
    return { status: res.status, body: (await res.json()) };
  };
  const ids = async (path: string): Promise<string[]> => {
    const r = await get(path);
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).to.equal(200);
    return (r.body as ApiEvent[]).map((e) => e.id);
  };
  const expect400 = async (path: string, mentions: string) => {
    const r = await get(path);
    expect(r.status, path).to.equal(400);
    expect(r.body).to.include({ success: false, code: 'invalid_input' });
    expect((r.body as { error: string }).error, path).to.include(mentions);
  };

  before(async () => {
    env = await createTestEnv('spec-events-modes');
    await appendTestEvents(env, events);
    const conn = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
    const run = startProjection({ db: env.db, redis: env.redis, blockingRedis: conn, keys: env.keys, logger: createLogger('silent', 'test') },
      archiveProjection, { batchSize: 100, blockMs: 100, maxAttempts: 3, claimIdleMs: 5000 });
    await waitFor(async () => (await groupInfo(env.redis, env.keys.events)).some((g) => g.name === archiveProjection.name && g.lag === 0 && g.pending === 0), 30_000, 'archive');
    await run.stop();
    conn.disconnect();
    api = await startTestApi(env);
  });
  after(async () => { await api?.close(); await env?.close(); });

  it('"signature, then ...": a reversed time range and reversed slots next to signature are ignored, not a 400', async () => {
    const r = await get(`/v1/events?signature=${gateway.signature}&${REVERSED_TIME}&${REVERSED_SLOTS}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect((r.body as ApiEvent).id).to.equal(gateway.id);
  });

  it('"then slot, then trackingId, then eventName": a reversed time range next to each of them is ignored', async () => {
    expect(await ids(`/v1/events?slot=300&${REVERSED_TIME}&${REVERSED_SLOTS}`)).to.deep.equal([record.id]);
    expect(await ids(`/v1/events?trackingId=${TRACK}&${REVERSED_TIME}&${REVERSED_SLOTS}`)).to.deep.equal([tracked.id]);
    expect(await ids(`/v1/events?eventName=PaymentRecord&${REVERSED_TIME}&${REVERSED_SLOTS}`)).to.deep.equal([record.id, tracked.id]);
  });

  it('"then startTime/endTime": reversed minSlot/maxSlot of the generic search are ignored next to a time range', async () => {
    expect(await ids(`/v1/events?startTime=${BASE_TIME + 150}&endTime=${BASE_TIME + 350}&${REVERSED_SLOTS}`)).to.deep.equal([record.id, gateway.id]);
  });

  it('a reversed range is a 400 where its own mode applies: the time range, then the generic search', async () => {
    await expect400(`/v1/events?${REVERSED_TIME}`, 'startTime');
    await expect400(`/v1/events?${REVERSED_SLOTS}`, 'minSlot');
    expect(await ids('/v1/events?minSlot=150&maxSlot=350')).to.deep.equal([record.id, gateway.id]);
    expect(await ids('/v1/events')).to.deep.equal([status.id, record.id, gateway.id, tracked.id]);
  });

  it('parameters malformed in themselves are still a 400, even when a higher-priority mode applies', async () => {
    const sig = `signature=${gateway.signature}`;
    await expect400(`/v1/events?${sig}&startTime=yesterday`, 'startTime');
    await expect400(`/v1/events?${sig}&endTime=2024-02-30T00:00:00Z`, 'endTime');
    await expect400(`/v1/events?${sig}&eventName=Nope`, 'eventName');
    await expect400(`/v1/events?${sig}&trackingId=${'x'.repeat(65)}`, 'trackingId');
    await expect400(`/v1/events?slot=300&minSlot=-1`, 'minSlot');
    await expect400(`/v1/events?slot=abc&${sig}`, 'slot');
  });
});
