/**
 * Issue 14, item 5: access follows payment. A `deferred` bearer is served only while its
 * subscription is paid through, next_payment_due + SUBSCRIPTION_GRACE_SECONDS > now, read
 * from the chain account (a localnet started here); past that it gets 402 with the
 * requirements. A subscription claim of /v1/tokens/issue (from the read model) says
 * paid, due or overdue.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import * as ed from '@noble/ed25519';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';
import { insertGateway, insertPolicy, newWallet, postJson, randomKey, subscription } from './auth-fixtures.js';

const GRACE = 120;
/**
 * the demo subscription's period: the Payment transaction pays the first one, so the next falls due this much later;
 * its grace, a tenth of it (360 s), is capped by SUBSCRIPTION_GRACE_SECONDS
 */
const PERIOD = 3600;

describe('access follows payment', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let offsetMs = 0;
  const clock = { now: () => Date.now() + offsetMs };
  let url: string;
  let deferred: AcceptedRequirement;

  before(async () => {
    h = await startX402('access', {
      X402_CACHE_MS: '0', SUBSCRIPTION_GRACE_SECONDS: String(GRACE), X402_JWT_TTL_SECONDS: '86400', X402_DEMO_FREQUENCY: `Custom:${PERIOD}`,
    }, { clock });
    url = `${h.api.url}${DEMO_PATH}`;
    deferred = (await h.accepts())[0]!;
    expect(deferred.gracePeriodSeconds).to.equal(GRACE);
  });
  after(async () => { await h.close(); });
  afterEach(() => { offsetMs = 0; });

  it('serves a deferred bearer while next_payment_due + grace is ahead, and answers 402 with the requirements past it', async () => {
    const payer = h.payer();
    const paid = await fetch(url, { headers: { payment: (await buildPayment(deferred, { wallet: payer, rpc: h.rpc })).header } });
    const { jwt } = (await paid.json()) as { jwt: string };
    expect(paid.status).to.equal(200);
    // the Payment transaction paid the first period, so the next payment falls due a period after creation; the grace period runs from there
    offsetMs = (PERIOD + GRACE - 30) * 1000;
    expect((await fetch(url, { headers: { authorization: `Bearer ${jwt}` } })).status).to.equal(200);
    offsetMs = (PERIOD + GRACE + 5) * 1000;
    const res = await fetch(url, { headers: { authorization: `Bearer ${jwt}` } });
    const body = (await res.json()) as any;
    expect(res.status).to.equal(402);
    expect(body.error).to.match(/is overdue: its payment was due at \d+ .* grace period of 120 s has passed/);
    expect(body.accepts).to.have.length(2);
    expect(res.headers.get('payment-required')).to.contain('scheme=deferred');
  });

  it('says paid, due or overdue in the subscription claims of /v1/tokens/issue', async () => {
    const now = Math.floor(clock.now() / 1000);
    const owner = await newWallet();
    const gateway = await insertGateway(h.env.db, randomKey());
    // each paid its first period (one never paid says unpaid: tokens-issue.test.ts)
    const paidThrough = await insertPolicy(h.env.db, { owner: owner.address, gateway, policyType: subscription(now + 1000), slot: 3, paymentCount: 1 });
    const due = await insertPolicy(h.env.db, { owner: owner.address, gateway, policyType: subscription(now - 60), slot: 2, paymentCount: 1 });
    const overdue = await insertPolicy(h.env.db, { owner: owner.address, gateway, policyType: subscription(now - GRACE - 1), slot: 1, paymentCount: 1 });
    const ch = (await (await postJson(`${h.api.url}/v1/tokens/challenge`, { walletPublicKey: owner.address })).json()) as { nonce: string };
    const signature = Array.from(await ed.signAsync(new TextEncoder().encode(ch.nonce), owner.secretKey));
    const res = await postJson(`${h.api.url}/v1/tokens/issue`, { walletPublicKey: owner.address, nonce: ch.nonce, signature });
    const bundle = (await res.json()) as any;
    expect(res.status, JSON.stringify(bundle)).to.equal(200);
    const byAddress = Object.fromEntries(bundle.policies.map((c: any) => [c.address, c]));
    expect(byAddress[paidThrough]).to.include({ paymentStanding: 'paid', validUntil: now + 1000 + GRACE });
    expect(byAddress[due]).to.include({ paymentStanding: 'due', validUntil: now - 60 + GRACE });
    expect(byAddress[overdue]).to.include({ paymentStanding: 'overdue' });
  });
});
