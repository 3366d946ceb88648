/**
 * The read cache's keys (infra/cache/read-cache.ts, src/kernel/names/read-scopes.ts) on the
 * real projections through the real runner: a commit expires the cached answers of the
 * keys it touched (gateway, recipient, policy, trackingId, event name) and leaves every
 * other key's answers cached, on each route of the read mix; an answer that names no key
 * expires with any commit of its model; a replay expires every answer of its model.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { paymentPoliciesProjection } from '../../projections/policies/projection.js';
import { replayProjection } from '../../projections/replay.js';
import { bumpReadVersions } from '../../infra/cache/read-cache.js';
import { makeEvent } from '../support/anchor-events.js';
import { buildScenario, G1, G2, K, P, project, T0, USDC_DEV } from './readmodels-scenario.js';

/** Each of these answers is cached; `changes` says whether the commit below changes it. */
const ROUTES: readonly { path: string; changes: boolean }[] = [
  { path: `/v1/payment-policies?gatewayPublicKey=${G1}`, changes: true },
  { path: `/v1/payment-policies?gatewayPublicKey=${G2}`, changes: false },
  { path: `/v1/subscriptions?gatewayPublicKey=${G2}`, changes: false },
  { path: `/v1/payment-policies?recipient=${K.r2}`, changes: true },
  { path: `/v1/payment-policies?recipient=${K.r1}`, changes: false },
  { path: '/v1/payment-policies?trackingId=mile', changes: true },
  { path: '/v1/payment-policies?trackingId=order-2', changes: false },
  { path: `/v1/payment-policies/${P.mile1}/executions`, changes: true },
  { path: `/v1/payment-policies/${P.sub2}/executions`, changes: false },
  { path: '/v1/onetime/onetime-42', changes: false },
  { path: `/v1/events/payments/stats?gateway=${G1}`, changes: true },
  { path: `/v1/events/payments/stats?gateway=${G2}`, changes: false },
  { path: '/v1/events?trackingId=mile', changes: true },
  { path: '/v1/events?trackingId=order-2', changes: false },
  { path: '/v1/events?eventName=PaymentRecord', changes: true },
  { path: '/v1/events?eventName=PaymentPolicyCreated', changes: false },
  { path: '/v1/events/typed/PaymentPolicyCreated', changes: false },
  // names no key: any commit of the archive expires it
  { path: '/v1/events?limit=5', changes: true },
];

describe('read cache keys', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let api: TestApi;

  const hits = async (): Promise<number> => {
    const m = await api.node.metrics.readCache.get();
    return m.values.find((v) => v.labels['result'] === 'hit')?.value ?? 0;
  };
  /** The body of a request, and whether the cache answered it. */
  const served = async (path: string): Promise<{ body: string; hit: boolean }> => {
    const before = await hits();
    const res = await fetch(`${api.url}${path}`);
    expect(res.status, path).to.equal(200);
    // the success envelope's timestamp changes with every send: compare the data
    const text = await res.text();
    const body = text.replace(/,"timestamp":\d+\}$/, '}');
    return { body, hit: (await hits()) === before + 1 };
  };
  const warm = async (): Promise<Map<string, string>> => {
    const bodies = new Map<string, string>();
    for (const r of ROUTES) {
      bodies.set(r.path, (await served(r.path)).body);
      expect((await served(r.path)).hit, `${r.path} cached`).to.equal(true);
    }
    return bodies;
  };

  before(async () => {
    env = await createTestEnv('read-cache-keys');
    await project(env, PROJECTIONS, buildScenario());
    // a TTL far past the test: only the versions expire answers here
    api = await startTestApi(env, { READ_CACHE_TTL_MS: '600000' });
    // a new Redis: the first read names the cache's generation, and is answered uncached
    await (await fetch(`${api.url}${ROUTES[0]!.path}`)).text();
  });
  after(async () => {
    await api?.close();
    await env?.close();
  });

  it('a payment of a G1 policy expires the answers of its keys and leaves the others cached', async () => {
    const cached = await warm();
    // the milestone policy of gateway G1, recipient r2, trackingId 'mile': its third payment
    const t = T0 + 1_000_000;
    await project(env, PROJECTIONS, [makeEvent('PaymentRecord', {
      payment_policy: P.mile1, gateway: G1, amount: '300', timestamp: String(t), memo: 'mile', record_id: 3,
      payer: K.w1, recipient: K.r2, token_mint: USDC_DEV,
    }, { seed: 'keys:mile-3', slot: 900_000, blockTime: t, ixPath: '0', index: 0 })]);

    for (const r of ROUTES) {
      const now = await served(r.path);
      if (r.changes) {
        expect(now.hit, `${r.path} expired`).to.equal(false);
        expect(now.body, `${r.path} shows the payment`).to.not.equal(cached.get(r.path));
      } else {
        expect(now.hit, `${r.path} still cached`).to.equal(true);
        expect(now.body, r.path).to.equal(cached.get(r.path));
      }
    }
    // and what a fresh read of the primary answers is what the cache now serves
    const g1 = JSON.parse((await served(`/v1/payment-policies?gatewayPublicKey=${G1}`)).body) as { data: { address: string; totalPaid: string }[] };
    expect(g1.data.find((p) => p.address === P.mile1)?.totalPaid).to.equal('600');
  });

  it('a replay expires every answer of its model, whatever keys they name', async () => {
    await warm();
    await replayProjection(env.db, paymentPoliciesProjection, { committed: () => bumpReadVersions(env.redis, env.keys, paymentPoliciesProjection.name) });
    expect((await served(`/v1/payment-policies?gatewayPublicKey=${G2}`)).hit).to.equal(false);
    expect((await served('/v1/payment-policies?trackingId=order-2')).hit).to.equal(false);
    expect((await served('/v1/onetime/onetime-42')).hit).to.equal(false);
    // other models keep theirs
    expect((await served(`/v1/payment-policies/${P.sub2}/executions`)).hit).to.equal(true);
    // the archive is not replayed, but an operator's bump with no keys (what replay's hook does) expires its answers too
    await bumpReadVersions(env.redis, env.keys, archiveProjection.name);
    expect((await served('/v1/events?eventName=PaymentPolicyCreated')).hit).to.equal(false);
    expect((await served('/v1/events?trackingId=order-2')).hit).to.equal(false);
  });
});
