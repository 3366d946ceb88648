/**
 * Money counters in a Redis restored from an older snapshot (an RDB restore, a lagging
 * replica promoted). Each test draws part of what a counter guards, DUMPs the counter's keys,
 * draws more, RESTOREs the older keys with REPLACE (the counters go back in time), then draws
 * again: what is admitted, as the Postgres ledger holds it, never exceeds the credit, the
 * period's cap or the exposure the merchant accepts, whatever Redis believes.
 *
 * Real HTTP (two API nodes on one database and Redis prefix), a localnet chain.
 */
import { expect } from 'chai';
import type { Keypair } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import type { TestApi } from '../support/app.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

describe('x402 counters restored from an older Redis snapshot never admit past the ledger', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let second: TestApi;
  let key = '';
  let prepaid: AcceptedRequirement;
  let capped: AcceptedRequirement;
  let exposed: AcceptedRequirement;
  const post = (path: string, body: unknown, base = h.api.url) => call(base, 'POST', path, body, { 'x-api-key': key });

  before(async () => {
    h = await startX402('stale-counters');
    second = await h.secondNode();
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const terms = { network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV };
    const payg = { ...terms, scheme: 'x402://payg', amount: '1000', maxChunkAmount: '20000', periodLengthSeconds: '3600' };
    const reg = await call(h.api.url, 'PUT', '/v1/x402/resources', {
      resource: 'https://merchant.example/stale', description: 'counters restored from an older snapshot',
      accepts: [
        { ...terms, scheme: 'x402://prepaid', amount: '50000', pricePerRequest: '1000' },
        // the period's cap guards: the account may owe far more than the cap
        { ...payg, maxAmountPerPeriod: '50000', maxUnsettledAmount: '1000000' },
        // the exposure guards: the cap is far above it
        { ...payg, maxAmountPerPeriod: '1000000', maxUnsettledAmount: '30000' },
      ],
    }, { 'x-api-key': key });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    [prepaid, capped, exposed] = reg.body.accepts;
  });
  after(async () => { await h.close(); });

  const settle = async (r: AcceptedRequirement, payer: Keypair = h.payer()) => {
    const s = await post('/v1/x402/settle', { x402Version: 2, paymentPayload: payloadOf((await buildPayment(r, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: r });
    expect(s.body.success, JSON.stringify(s.body)).to.equal(true);
    return s.body as { jwt: string; policy: string };
  };
  const use = async (jwt: string, r: AcceptedRequirement, amount: string, base = h.api.url) =>
    (await post('/v1/x402/usage', { jwt, paymentRequirements: r, amount }, base)).body as { admitted: boolean; reason?: string };
  /** the counters of this test's prefix, as a snapshot would hold them */
  const snapshot = async () => {
    const keys = await h.env.redis.keys(`${h.env.prefix}x402:*`);
    return Promise.all(keys.map(async (k) => ({ k, dump: await h.env.redis.dumpBuffer(k), ttl: await h.env.redis.pttl(k) })));
  };
  const restore = async (snap: Awaited<ReturnType<typeof snapshot>>) => {
    for (const s of snap) await h.env.redis.restore(s.k, s.ttl > 0 ? s.ttl : 0, s.dump, 'REPLACE');
  };
  const drawn = async (table: 'prepaid_usage' | 'payg_usage', policy: string) => {
    const column = table === 'prepaid_usage' ? 'amount' : 'chunk';
    const r = await h.env.db.selectFrom(table).select((e) => e.fn.sum<string>(column).as('total')).where('policy', '=', policy).executeTakeFirstOrThrow();
    return BigInt(r.total ?? 0);
  };

  it('a prepaid credit of 50,000 is never drawn past 50,000', async () => {
    const a = await settle(prepaid);
    expect((await use(a.jwt, prepaid, '20000')).admitted).to.equal(true);
    const older = await snapshot();
    expect((await use(a.jwt, prepaid, '20000', second.url)).admitted).to.equal(true);
    await restore(older); // the counter says 20,000 drawn; the ledger holds 40,000
    const again = await use(a.jwt, prepaid, '20000');
    expect(again.admitted, 'a stale counter admitted 20,000 past the credit').to.equal(false);
    expect(again.reason).to.match(/the prepaid credit of 50000 is used up \(40000 used, this request costs 20000\)/);
    expect((await use(a.jwt, prepaid, '10000', second.url)).admitted).to.equal(true);
    expect((await use(a.jwt, prepaid, '1000')).admitted).to.equal(false);
    expect(await drawn('prepaid_usage', a.policy)).to.equal(50_000n);
  });

  it('holds when many requests race on two nodes against the restored counter', async () => {
    const a = await settle(prepaid);
    expect((await use(a.jwt, prepaid, '10000')).admitted).to.equal(true);
    const older = await snapshot();
    expect((await use(a.jwt, prepaid, '30000')).admitted).to.equal(true);
    await restore(older);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => use(a.jwt, prepaid, '1000', i % 2 ? second.url : h.api.url)));
    expect(answers.filter((x) => x.admitted)).to.have.length(10);
    expect(await drawn('prepaid_usage', a.policy)).to.equal(50_000n);
  });

  it('a pay-as-you-go period\'s cap of 50,000 is never passed', async () => {
    const a = await settle(capped);
    expect((await use(a.jwt, capped, '20000')).admitted).to.equal(true);
    const older = await snapshot();
    expect((await use(a.jwt, capped, '20000', second.url)).admitted).to.equal(true);
    await restore(older); // the period's counter says 20,000 used; the ledger holds 40,000
    const again = await use(a.jwt, capped, '20000');
    expect(again.admitted, 'a stale counter admitted 20,000 past the period\'s cap').to.equal(false);
    expect(again.reason).to.match(/the period's cap of 50000 is reached \(40000 used, this request costs 20000\)/);
    expect((await use(a.jwt, capped, '10000', second.url)).admitted).to.equal(true);
    expect(await drawn('payg_usage', a.policy)).to.equal(50_000n);
  });

  it('a payer account\'s usage not charged yet never passes the exposure the merchant accepts', async () => {
    const a = await settle(exposed);
    expect((await use(a.jwt, exposed, '20000')).admitted).to.equal(true);
    const older = await snapshot();
    expect((await use(a.jwt, exposed, '10000', second.url)).admitted).to.equal(true);
    await restore(older); // the account's outstanding says 20,000; the ledger holds 30,000 not charged
    const again = await use(a.jwt, exposed, '10000');
    expect(again.admitted, 'a stale outstanding admitted 10,000 past the exposure').to.equal(false);
    expect(again.reason).to.match(/30000 is used and not charged on chain yet; this request costs 10000 and the requirement's maxUnsettledAmount is 30000/);
    expect(await drawn('payg_usage', a.policy)).to.equal(30_000n);
  });
});
