/**
 * Ledger rows recorded ahead for a busy counter (commands/x402/meter-pool.ts): a burst of one
 * payer's requests is served from rows written before the requests came, and the money comes
 * out exactly as if each row were written on demand: every admitted request has its own row,
 * durable before its answer; rows no request took are deleted and their chunks given back; the
 * cap, the credit and the exposure are never passed, and what a block held is the payer's to use
 * again once it goes back; rows a dead process left are never charged nor drawn.
 *
 * Real HTTP (the facilitator's usage route, many reports at once), Postgres, Redis and a localnet.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sql } from 'kysely';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { counterUsed } from '../../commands/x402/meter-slices.js';
import { usageCounterKey } from '../../commands/x402/metering.js';
import { prepaidCounterKey, drawCredit } from '../../commands/x402/prepaid/meter.js';
import { createCreditLedger, dropExpiredCreditReservations } from '../../commands/x402/prepaid/ledger.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('x402 rows recorded ahead: a busy payer waits for no statement, and the money is the same', function () {
  this.timeout(120_000);
  let h: X402Harness;
  let key = '';
  let wide: AcceptedRequirement;
  let capped: AcceptedRequirement;
  let credit: AcceptedRequirement;
  let bigCredit: AcceptedRequirement;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });

  before(async () => {
    h = await startX402('meter-ahead', { RATE_LIMIT_PER_MINUTE: '1000000' });
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const terms = { network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV };
    const payg = { ...terms, scheme: 'x402://payg', amount: '1000', maxChunkAmount: '1000', periodLengthSeconds: '3600' };
    const reg = await call(h.api.url, 'PUT', '/v1/x402/resources', {
      resource: 'https://merchant.example/ahead', description: 'rows recorded ahead',
      accepts: [
        { ...payg, maxAmountPerPeriod: '100000000', maxUnsettledAmount: '100000000' },
        // 200 requests' worth: blocks stop short of it, and a burst of 300 meets it
        { ...payg, maxAmountPerPeriod: '200000', maxUnsettledAmount: '100000000' },
        { ...terms, scheme: 'x402://prepaid', amount: '200000', pricePerRequest: '1000' },
        { ...terms, scheme: 'x402://prepaid', amount: '2000000', pricePerRequest: '1000' },
      ],
    }, { 'x-api-key': key });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    [wide, capped, credit, bigCredit] = reg.body.accepts;
  });
  after(async () => { await h.close(); });

  const settle = async (r: AcceptedRequirement) => {
    const s = await post('/v1/x402/settle', { x402Version: 2, paymentPayload: payloadOf((await buildPayment(r, { wallet: h.payer(), rpc: h.rpc })).header), paymentRequirements: r });
    expect(s.body.success, JSON.stringify(s.body)).to.equal(true);
    return s.body as { jwt: string; policy: string };
  };
  /** `n` usage reports, `concurrency` in flight at once: how many were admitted */
  const burst = async (jwt: string, r: AcceptedRequirement, n: number, concurrency: number): Promise<number> => {
    let admitted = 0;
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next += 1;
        const a = await post('/v1/x402/usage', { jwt, paymentRequirements: r });
        expect(a.status, JSON.stringify(a.body)).to.equal(200);
        if (a.body.admitted === true) admitted += 1;
      }
    }));
    return admitted;
  };
  const ahead = () => h.api.node.x402.usage!.ahead!.stats();
  const credits = () => h.api.node.x402.credits!.ahead!.stats();
  /** the payg rows of a policy: their sum, and how many are served (their process's mark covers them) */
  const paygRows = async (policy: string) => {
    const r = await sql<{ n: string; total: string | null; served: string }>`
      SELECT count(*)::text AS n, sum(chunk)::text AS total, count(*) FILTER (WHERE payg_usage_served(u))::text AS served
      FROM payg_usage u WHERE policy = ${policy}`.execute(h.env.db);
    return { n: Number(r.rows[0]!.n), total: BigInt(r.rows[0]!.total ?? 0), served: Number(r.rows[0]!.served) };
  };
  const prepaidRows = async (policy: string) => {
    const r = await sql<{ n: string; total: string | null; served: string }>`
      SELECT count(*)::text AS n, sum(amount)::text AS total, count(*) FILTER (WHERE prepaid_usage_served(u))::text AS served
      FROM prepaid_usage u WHERE policy = ${policy}`.execute(h.env.db);
    return { n: Number(r.rows[0]!.n), total: BigInt(r.rows[0]!.total ?? 0), served: Number(r.rows[0]!.served) };
  };
  /**
   * A burst of 300 against a limit of 200 requests never passes it; once what blocks held went back,
   * one request at a time reaches it exactly
   */
  const reachesExactly = async (jwt: string, r: AcceptedRequirement) => {
    const first = await burst(jwt, r, 300, 40);
    expect(first).to.be.at.most(200);
    await settled();
    const rest = await burst(jwt, r, 250 - first, 1);
    expect(first + rest).to.equal(200);
    await settled();
  };
  /** until the unused rows went back (idle) and the served marks were written */
  const settled = async () => { await sleep(300); await h.api.node.x402.usage!.flush(); await h.api.node.x402.credits!.flush(); };

  it('pay-as-you-go: a burst is served from blocks, each request has its own served row, and the unused rows go back', async () => {
    const a = await settle(wide);
    const before = ahead();
    expect(await burst(a.jwt, wide, 400, 40)).to.equal(400);
    const during = ahead();
    expect(during.blocks - before.blocks, 'no block was recorded ahead').to.be.greaterThan(0);
    expect(during.taken - before.taken, 'no request took a row recorded ahead').to.be.greaterThan(0);
    await settled();
    // exactly the 400 admitted: no row of a block left behind, every one served
    expect(await paygRows(a.policy)).to.deep.equal({ n: 400, total: 400_000n, served: 400 });
    // and the counter says what the ledger holds: the unused rows' chunks were given back
    const period = BigInt((await sql<{ p: string }>`SELECT min(period_start)::text AS p FROM payg_usage WHERE policy = ${a.policy}`.execute(h.env.db)).rows[0]!.p);
    expect(await counterUsed(h.env.redis, usageCounterKey(h.env.prefix, a.policy, period))).to.equal(400_000n);
  });

  it('pay-as-you-go: a period\'s cap is never passed, and what blocks held is usable again once they go back', async () => {
    const a = await settle(capped);
    await reachesExactly(a.jwt, capped);
    expect(await paygRows(a.policy)).to.deep.equal({ n: 200, total: 200_000n, served: 200 });
  });

  it('prepaid: a burst is drawn from blocks, each draw its own served row, and the unused rows go back to the credit', async () => {
    const a = await settle(bigCredit);
    const before = credits();
    expect(await burst(a.jwt, bigCredit, 400, 40)).to.equal(400);
    expect(credits().taken - before.taken, 'no draw took a row recorded ahead').to.be.greaterThan(0);
    await settled();
    expect(await prepaidRows(a.policy)).to.deep.equal({ n: 400, total: 400_000n, served: 400 });
    expect(await counterUsed(h.env.redis, prepaidCounterKey(h.env.prefix, a.policy))).to.equal(400_000n);
  });

  it('prepaid: a burst never draws past the credit, every draw is served, and the credit is whole for the payer', async () => {
    const a = await settle(credit);
    await reachesExactly(a.jwt, credit);
    expect(await prepaidRows(a.policy)).to.deep.equal({ n: 200, total: 200_000n, served: 200 });
    expect(await counterUsed(h.env.redis, prepaidCounterKey(h.env.prefix, a.policy))).to.equal(200_000n);
  });

  it('prepaid: rows a dead process recorded ahead are never drawn: deleted at their bound, the credit rebuilt whole', async () => {
    const a = await settle(credit);
    // a process of its own (its own served marks), whose requests never end: it died with them in flight
    const dead = createCreditLedger(h.env.db, { ahead: 32 });
    const draw = () => drawCredit(h.env.redis, h.env.prefix, a.policy, 200_000n, 1000n, Math.floor(Date.now() / 1000), dead, { requestId: randomUUID(), gateway: credit.gateway });
    for (let round = 0; round < 4; round += 1) await Promise.all(Array.from({ length: 16 }, draw));
    expect(dead.ahead!.stats().blocks).to.be.greaterThan(0);
    // the draws metered one by one (before the counter was busy) are draws; the rows recorded ahead are not, taken or not
    const direct = Number((await sql<{ n: string }>`SELECT count(*)::text AS n FROM prepaid_usage WHERE policy = ${a.policy} AND reserved_until IS NULL`.execute(h.env.db)).rows[0]!.n);
    const held = await prepaidRows(a.policy);
    expect(held.n - direct, 'no row was recorded ahead').to.be.greaterThan(0);
    expect(held.served, 'a reservation counted as drawn').to.equal(direct);
    // their bound passes (the rows' clock moved on: X402_PAYG_RESERVATION_SECONDS is 300 s)
    await sql`UPDATE prepaid_usage SET reserved_until = now() - interval '1 second' WHERE policy = ${a.policy} AND reserved_until IS NOT NULL`.execute(h.env.db);
    expect(await dropExpiredCreditReservations(h.env.db)).to.deep.equal([a.policy]);
    expect(await prepaidRows(a.policy)).to.deep.equal({ n: direct, total: BigInt(direct) * 1000n, served: direct });
    // the settler drops the counter with them: rebuilt from the ledger, the credit is the payer's again, all of it
    await h.env.redis.del(prepaidCounterKey(h.env.prefix, a.policy));
    expect(await burst(a.jwt, credit, 210, 1)).to.equal(200 - direct);
  });
});
