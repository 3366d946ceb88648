/**
 * Bad input to every events endpoint is a 400 in the error envelope, never a 500; and the
 * OpenAPI document describes every events route.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { KIND_ROUTES } from '../../queries/events/kind-routes.js';

const MAX_LIMIT = 500;
const KEY = '11111111111111111111111111111111';
const SIG = '5'.repeat(88);

const PAGINATED = ['/v1/events', '/v1/events/typed/PaymentRecord', ...KIND_ROUTES.map((r) => r.path)];
const ALL = [...PAGINATED, '/v1/events/count', '/v1/events/names', '/v1/events/names/tributary', '/v1/events/payments/stats'];

describe('events API: bad input', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('events-bad-input');
    api = await startTestApi(env, { API_MAX_LIMIT: String(MAX_LIMIT) });
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  const expect400 = async (path: string, mentions?: string) => {
    const res = await fetch(`${api.url}${path}`);
    const body = (await res.json()) as { error: string; code: string; success: boolean; timestamp: number };
    expect(res.status, path).to.equal(400);
    expect(body, path).to.include({ success: false, code: 'invalid_input' });
    expect(body.timestamp, path).to.be.a('number');
    if (mentions) expect(body.error, path).to.include(mentions);
  };

  it('rejects a negative, zero, non-numeric, fractional or too large limit, and a bad offset', async () => {
    for (const p of PAGINATED) {
      for (const limit of ['-1', '0', 'abc', '2.5', String(MAX_LIMIT + 1), '']) await expect400(`${p}?limit=${limit}`, 'limit');
      for (const offset of ['-1', 'x']) await expect400(`${p}?offset=${offset}`, 'offset');
    }
  });

  it('accepts the documented maximum limit', async () => {
    const res = await fetch(`${api.url}/v1/events?limit=${MAX_LIMIT}`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal([]);
  });

  it('rejects unknown query parameters everywhere', async () => {
    for (const p of ALL) await expect400(`${p}?bogus=1`, "unknown query parameter 'bogus'");
    await expect400('/v1/events?event_name=PaymentRecord', 'event_name');
  });

  it('rejects non-integer and negative slots', async () => {
    for (const q of ['slot=1.5', 'slot=abc', 'slot=-3', 'slot=1e400', 'minSlot=x', 'maxSlot=-1', 'slot=1&slot=2']) await expect400(`/v1/events?${q}`);
    await expect400('/v1/events?minSlot=10&maxSlot=5', 'minSlot');
  });

  it('rejects unknown event names, in the query and in the path', async () => {
    await expect400('/v1/events?eventName=Nope', 'eventName');
    await expect400('/v1/events/count?eventName=paymentrecord', 'eventName');
    await expect400('/v1/events/typed/Nope', 'eventName');
  });

  it('rejects unparseable or reversed times', async () => {
    const bad = ['yesterday', '2024-13-01', '2024-02-30T00:00:00Z', '2024-05-01T25:00:00Z', '1.5', '-5', '99999999999999', '2024-05-01T12:00:00+5'];
    for (const p of ['/v1/events', '/v1/events/count', '/v1/events/payments/stats']) {
      for (const t of bad) {
        await expect400(`${p}?startTime=${encodeURIComponent(t)}`, 'startTime');
        await expect400(`${p}?endTime=${encodeURIComponent(t)}`, 'endTime');
      }
      await expect400(`${p}?startTime=2024-05-02&endTime=2024-05-01`, 'startTime');
    }
  });

  it('rejects malformed signatures, keys and tracking ids', async () => {
    await expect400('/v1/events?signature=abc', 'signature');
    await expect400(`/v1/events?signature=${'0'.repeat(88)}`, 'signature');
    await expect400(`/v1/events?trackingId=${encodeURIComponent('é'.repeat(33))}`, 'trackingId');
    await expect400(`/v1/events?trackingId=${'x'.repeat(65)}`, 'trackingId');
    await expect400('/v1/events?trackingId=', 'trackingId');
    for (const r of KIND_ROUTES) {
      for (const param of Object.keys(r.filters)) await expect400(`${r.path}?${param}=not-a-key!`, param);
    }
    await expect400('/v1/events/payments/stats?gateway=0OIl', 'gateway');
  });

  it('answers 404 in the error envelope for a well-formed signature with no event', async () => {
    const res = await fetch(`${api.url}/v1/events?signature=${SIG}`);
    expect(res.status).to.equal(404);
    expect(await res.json()).to.include({ success: false, code: 'not_found' });
  });

  it('answers empty results on an empty archive', async () => {
    const get = async (p: string) => (await fetch(`${api.url}${p}`)).json();
    expect(await get('/v1/events/count')).to.deep.equal({ count: 0 });
    expect(await get('/v1/events/names')).to.deep.equal([]);
    expect(await get(`/v1/events/payments/stats?gateway=${KEY}`)).to.deep.equal({ count: 0, volume: '0' });
    expect(await get('/v1/events/payments?gateway=' + KEY)).to.deep.equal([]);
  });

  it('publishes every events route in /openapi.yaml', async () => {
    const doc = await (await fetch(`${api.url}/openapi.yaml`)).text();
    for (const p of [...ALL.filter((x) => !x.includes('typed')), '/v1/events/typed/{eventName}']) expect(doc, p).to.include(`${p}:`);
  });
});
