/**
 * One payer account funding pay-as-you-go policies at two gateways. Each policy's own check
 * saw only its own usage against the whole account, so together they admitted more than
 * the account could pay: service for nothing. The account's usage not charged yet is now
 * counted across its policies, in Redis next to each policy's counter, rebuilt from the
 * Postgres ledger when Redis loses it, and released when a charge executes.
 *
 * Real HTTP (two API nodes, each serving the demo resource for another fixture gateway, on
 * one database and one Redis prefix), a localnet chain, the settler of the first gateway.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { PublicKey, Transaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { registerX402Routes } from '../../commands/x402/routes.js';
import { registerFacilitatorRoutes } from '../../commands/x402/facilitator/routes.js';
import { associatedTokenAddress, transferIx } from '../../src/kernel/domain/spl-token.js';
import { ADMISSION_SECONDS } from '../../commands/settlement/charges.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { call, gatewayJwt } from './x402-facilitator-support.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';

const PRICE = 10_000n;

describe('x402 pay-as-you-go: one payer account shared by policies at two gateways', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  let second: TestApi;

  before(async () => {
    s = await startSchedulerHarness('payg-shared', {
      X402_DEMO_PAYG_PRICE: String(PRICE), X402_DEMO_PAYG_MAX_CHUNK: String(PRICE), X402_DEMO_PAYG_MAX_PER_PERIOD: '1000000',
      X402_DEMO_PAYG_PERIOD_SECONDS: '3600', X402_CACHE_MS: '200', PAYG_SETTLE_THRESHOLD: '1', PAYG_SETTLE_INTERVAL_MS: '500',
    });
    const other = s.h.ln.fixtures.gateways[1]!;
    second = await startTestApi(s.h.env, { ...s.h.overrides, X402_DEMO_GATEWAY: other.address, X402_DEMO_RECIPIENT: other.authority }, {
      modules: [registerSigningRoutes, registerX402Routes, registerFacilitatorRoutes],
    });
  });
  after(async () => { await second?.close(); await s?.close(); });

  const bearer = async (base: string, jwt: string) => {
    const res = await fetch(`${base}${DEMO_PATH}`, { headers: { authorization: `Bearer ${jwt}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const pay = async (base: string, payer: Keypair) => {
    const r = await payAndFetch(`${base}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(r.response.status).to.equal(200);
    return { jwt: r.paid!.jwt, policy: r.paid!.policy!, requirement: r.paid!.requirement };
  };
  const send = async (payer: Keypair, ix: TransactionInstruction) => {
    const { value } = await s.h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash }).add(ix);
    tx.sign(payer);
    await s.h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
  };
  const pastCache = () => new Promise((r) => setTimeout(r, 400)); // past X402_CACHE_MS
  /** Redis loses every metering count (this test's prefix only: the Redis is shared) */
  const loseCounts = async () => {
    const keys = await s.h.env.redis.keys(`${s.h.env.prefix}x402:*`);
    if (keys.length > 0) await s.h.env.redis.del(...keys);
    return keys;
  };
  const usage = (policy: string) => s.h.env.db.selectFrom('payg_usage').selectAll().where('policy', '=', policy).execute();
  const shortOf = (funds: number, used: number) =>
    new RegExp(`funds ${funds} more, this request costs ${PRICE} on top of ${used} used and not charged yet \\(InsufficientBalance \\(6007\\)\\)`);

  it('refuses the second gateway\'s request the account cannot fund, still after Redis lost the counts, and admits again once a charge settled', async () => {
    const payer = s.h.payer();
    const a = await pay(s.h.api.url, payer); // gateway 1: its own request metered, 10,000 owed
    const b = await pay(second.url, payer); // gateway 2, the same token account: 20,000 owed
    expect(b.requirement.gateway).to.not.equal(a.requirement.gateway);
    const mint = new PublicKey(a.requirement.tokenMint).toBase58();
    const source = associatedTokenAddress(payer.publicKey.toBase58(), mint);
    const balance = await s.h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [source]);
    const sink = associatedTokenAddress(s.h.payer().publicKey.toBase58(), mint);
    // the account keeps 35,000: the 20,000 owed and 1.5 requests' worth more
    await send(payer, transferIx(source, sink, payer.publicKey.toBase58(), BigInt(balance.value.amount) - 35_000n));
    await pastCache();

    expect((await bearer(s.h.api.url, a.jwt)).status, 'gateway 1: 30,000 owed of 35,000').to.equal(200);
    // gateway 2's own usage (10,000 + 10,000) fits in 35,000: admitted before, though the account owes 40,000 then
    const refused = await bearer(second.url, b.jwt);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(402);
    expect(refused.body.error).to.match(shortOf(35_000, 30_000));
    expect((await bearer(s.h.api.url, a.jwt)).body.error, 'gateway 1 alike').to.match(shortOf(35_000, 30_000));
    const rows = [...await usage(a.policy), ...await usage(b.policy)];
    expect(rows.map((u) => u.chunk).sort(), 'nothing metered for the refused requests').to.deep.equal(['10000', '10000', '10000']);
    const userPayment = rows[0]!.user_payment;
    expect(userPayment, 'every row names the account it draws on').to.be.a('string');
    expect(rows.every((u) => u.user_payment === userPayment)).to.equal(true);

    expect(await loseCounts(), 'the outstanding was kept in Redis').to.include(`${s.h.env.prefix}x402:outstanding:${userPayment}`);
    const rebuilt = await bearer(second.url, b.jwt);
    expect(rebuilt.status, 'rebuilt from the ledger, still refused').to.equal(402);
    expect(rebuilt.body.error).to.match(shortOf(35_000, 30_000));

    // gateway 1's 20,000 is charged: the account holds 15,000 and owes gateway 2's 10,000
    const settler = s.settler({ autoStart: false });
    await new Promise((r) => setTimeout(r, ADMISSION_SECONDS * 1000 + 500));
    await settler.tick();
    await settler.stop();
    expect(s.records(a.policy).reduce((x, r) => x + r.amount, 0n), 'gateway 1 charged').to.equal(2n * PRICE);
    await pastCache();
    const owed = await bearer(second.url, b.jwt);
    expect(owed.body.error, 'the charge left the outstanding, gateway 2\'s usage did not').to.match(shortOf(15_000, 10_000));
    const auth = { authorization: `Bearer ${await gatewayJwt(s.h, b.requirement.gateway, s.h.ln.fixtures.gateways[1]!.authority)}` };
    const half = await call(second.url, 'POST', '/v1/x402/usage', { jwt: b.jwt, paymentRequirements: b.requirement, amount: '5000' }, auth);
    expect(half.status, JSON.stringify(half.body)).to.equal(200);
    expect(half.body, 'what the account still funds is admitted again').to.deep.include({ admitted: true });

    await loseCounts(); // rebuilt without the charged rows: 15,000 owed of 15,000
    const full = await bearer(s.h.api.url, a.jwt);
    expect(full.status).to.equal(402);
    expect(full.body.error).to.match(new RegExp(`funds 15000 more, this request costs ${PRICE} on top of 15000 used`));
  });
});

describe('x402 pay-as-you-go: usage of a period past, not charged yet, still draws on the account', function () {
  this.timeout(60_000);
  const PERIOD = 60;
  let h: X402Harness;
  let offsetMs = 0;
  const clock = { now: () => Date.now() + offsetMs };

  before(async () => {
    h = await startX402('payg-rollover', {
      X402_DEMO_PAYG_PRICE: String(PRICE), X402_DEMO_PAYG_MAX_CHUNK: String(PRICE), X402_DEMO_PAYG_MAX_PER_PERIOD: '1000000',
      X402_DEMO_PAYG_PERIOD_SECONDS: String(PERIOD), X402_CACHE_MS: '200',
    }, { clock });
  });
  after(async () => { await h?.close(); });

  it('refuses in the next period what the account cannot fund on top of the last period\'s usage', async () => {
    const bearer = async (jwt: string) => {
      const res = await fetch(`${h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${jwt}` } });
      return { status: res.status, body: (await res.json()) as any };
    };
    const payer = h.payer();
    const paid = await payAndFetch(`${h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: h.ln.rpcUrl, scheme: 'x402://payg' });
    const jwt = paid.paid!.jwt;
    const mint = new PublicKey(paid.paid!.requirement.tokenMint).toBase58();
    const source = associatedTokenAddress(payer.publicKey.toBase58(), mint);
    const balance = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [source]);
    const { value } = await h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const sink = associatedTokenAddress(h.payer().publicKey.toBase58(), mint);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash })
      .add(transferIx(source, sink, payer.publicKey.toBase58(), BigInt(balance.value.amount) - 25_000n));
    tx.sign(payer);
    await h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
    await new Promise((r) => setTimeout(r, 400));
    expect((await bearer(jwt)).status, '20,000 used of 25,000').to.equal(200);
    expect((await bearer(jwt)).status).to.equal(402);

    offsetMs = PERIOD * 1000; // the next period: its counter starts at zero, the 20,000 is not charged yet
    try {
      const refused = await bearer(jwt);
      expect(refused.status, JSON.stringify(refused.body)).to.equal(402);
      expect(refused.body.error).to.match(/funds 25000 more, this request costs 10000 on top of 20000 used and not charged yet/);
    } finally {
      offsetMs = 0;
    }
  });
});
