/**
 * A fixed-term `deferred` subscription (maxRenewals, or autoRenew off) is Completed by the
 * program on its last payment, with next_payment_due moved to the end of the period that
 * payment bought and max_renewals counted down to what is left. It took the payer's money
 * and then refused access: /settle read a Completed policy (and max_renewals 0 against
 * the requirement's 1) and answered success: false after the balance dropped; the last
 * period of maxRenewals N got no access. Now it is honoured through its last paid period
 * plus its grace (a tenth of the period), then refused: on the facilitator's settle, the
 * bearer path (/usage and a middleware), and /v1/tokens/issue claims. A subscription its
 * payer paused is honoured on the bearer path the same way (the money model found it
 * refused within the period it had paid).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import * as ed from '@noble/ed25519';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { paymentRequired } from '../../commands/x402/middleware.js';
import { executeAccounts } from '../../commands/x402/upto.js';
import { tributaryInstruction } from '../../commands/x402/upto-instruction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';
import { insertPolicy, newWallet, postJson } from './auth-fixtures.js';
import { setPolicyStatus } from './scheduler-chain.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const AMOUNT = 1000n;

describe('a Completed subscription is honoured through its last paid period and its grace', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let key = '';
  let offsetMs = 0;
  const clock = { now: () => Date.now() + offsetMs };
  const gw = () => h.ln.fixtures.gateways[0]!;
  const post = (path: string, body: unknown) => call(h.api.url, 'POST', path, body, { 'x-api-key': key });
  const balance = async (owner: Keypair): Promise<bigint> => {
    const r = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(owner.publicKey.toBase58(), USDC_DEV)]);
    return BigInt(r.value.amount);
  };
  const policyOf = async (address: string) => {
    const read = await readProgramAccount(h.rpc, address, 'PaymentPolicy', { programId: PROGRAM_ID });
    if (read.kind !== 'found') throw new Error(`no policy ${address}`);
    return { status: read.data['status'], type: read.data['policy_type'] as { next_payment_due: string; max_renewals: number | null } };
  };
  const register = async (terms: Record<string, unknown>): Promise<AcceptedRequirement> => {
    const reg = await call(h.api.url, 'PUT', '/v1/x402/resources', {
      resource: `https://merchant.example/${Object.values(terms).join('-')}`, accepts: [{
        scheme: 'deferred', network: 'solana:localnet', amount: AMOUNT.toString(), recipient: gw().authority, gateway: gw().address, tokenMint: USDC_DEV, ...terms,
      }],
    }, { 'x-api-key': key });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    return reg.body.accepts[0];
  };
  const subscribe = async (accepted: AcceptedRequirement, payer: Keypair) => {
    const before = await balance(payer);
    const r = await post('/v1/x402/settle', { paymentPayload: payloadOf((await buildPayment(accepted, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: accepted });
    expect(await balance(payer)).to.equal(before - AMOUNT);
    return r.body;
  };
  const usage = (jwt: string, accepted: AcceptedRequirement) => post('/v1/x402/usage', { jwt, paymentRequirements: accepted });
  /** the API's clock at `at` (unix s) */
  const at = (seconds: number) => { offsetMs = seconds * 1000 - Date.now(); };
  /** the bearer is admitted in the paid period and within `grace` s after `due`, and refused with `overdue` after */
  const servedThroughGrace = async (paid: { jwt: string; policy: string }, accepted: AcceptedRequirement, due: number, grace: number, overdue: RegExp) => {
    expect((await usage(paid.jwt, accepted)).body, 'in the paid period').to.deep.include({ admitted: true, policy: paid.policy });
    at(due + grace - 5);
    expect((await usage(paid.jwt, accepted)).body, 'within the grace').to.deep.include({ admitted: true });
    at(due + grace + 1);
    const late = (await usage(paid.jwt, accepted)).body;
    expect(late.admitted).to.equal(false);
    expect(late.reason).to.match(overdue);
  };

  before(async () => {
    h = await startX402('completed-sub', { X402_CACHE_MS: '0' }, { clock });
    const jwt = await gatewayJwt(h, gw().address, gw().authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gw().address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
  });
  after(async () => { await h?.close(); });
  afterEach(() => { offsetMs = 0; });

  it('maxRenewals 1: the settle that took the money answers success and a JWT, honoured until the period ends plus its grace', async () => {
    const accepted = await register({ paymentFrequency: 'Custom:600', maxRenewals: 1 });
    expect(accepted.gracePeriodSeconds).to.equal(60);
    const paid = await subscribe(accepted, h.payer());
    expect(paid.success, JSON.stringify(paid)).to.equal(true);
    const policy = await policyOf(paid.policy);
    expect(policy.status).to.equal('Completed');
    expect(policy.type.max_renewals).to.equal(0);
    await servedThroughGrace(paid, accepted, Number(policy.type.next_payment_due), 60, /is overdue: its payment was due at \d+ .*grace period of 60 s has passed/);
  });

  it('paused by its payer: served through the period it paid plus its grace, then refused as overdue', async () => {
    const accepted = await register({ paymentFrequency: 'Custom:900' });
    const payer = h.payer();
    const paid = await subscribe(accepted, payer);
    expect(paid.success, JSON.stringify(paid)).to.equal(true);
    await setPolicyStatus(h.rpc, payer, paid.policy, USDC_DEV, 'Paused');
    for (let i = 0; i < 20 && (await policyOf(paid.policy)).status !== 'Paused'; i += 1) await new Promise((r) => setTimeout(r, 100));
    const policy = await policyOf(paid.policy);
    expect(policy.status).to.equal('Paused');
    await servedThroughGrace(paid, accepted, Number(policy.type.next_payment_due), 90, /is overdue/);
  });

  it('autoRenew off: Completed by its first payment, and a middleware serves its bearer', async () => {
    const accepted = await register({ paymentFrequency: 'Custom:600', autoRenew: false, maxRenewals: 3 });
    const paid = await subscribe(accepted, h.payer());
    expect(paid.success, JSON.stringify(paid)).to.equal(true);
    expect((await policyOf(paid.policy)).status).to.equal('Completed');
    const { resource: _r, id: _i, extra: _e, currency: _c, ...input } = accepted;
    const app = express();
    app.get('/report', paymentRequired([input], { facilitatorUrl: h.api.url, apiKey: key, programId: PROGRAM_ID }), (_req, res) => { res.json({ ok: true }); });
    const server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/report`;
      const unpaid = await fetch(url);
      expect(unpaid.status).to.equal(402);
      expect(((await unpaid.json()) as any).accepts[0]).to.include({ gracePeriodSeconds: 60, maxRenewals: 3, autoRenew: false });
      const res = await fetch(url, { headers: { authorization: `Bearer ${paid.jwt}` } });
      expect(res.status, await res.clone().text()).to.equal(200);
    } finally {
      await new Promise((r) => { server.closeAllConnections(); server.close(r); });
    }
  });

  it('maxRenewals 2: the last paid period is served too', async () => {
    const accepted = await register({ paymentFrequency: 'Custom:2', maxRenewals: 2 });
    const payer = h.payer();
    const paid = await subscribe(accepted, payer);
    expect(paid.success, JSON.stringify(paid)).to.equal(true);
    expect(await policyOf(paid.policy)).to.deep.include({ status: 'Active' });
    // the second (last) period, charged by the gateway's signer once due on the chain's clock
    await new Promise((r) => setTimeout(r, 3_500));
    const signer = Keypair.fromSecretKey(bs58.decode(gw().signerSecretKey));
    const accounts = await executeAccounts(h.rpc, PROGRAM_ID, paid.policy);
    const ix = tributaryInstruction(PROGRAM_ID, 'execute_payment', { ...accounts, fee_payer: signer.publicKey.toBase58() }, { payment_amount: null });
    const { value } = await h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: signer.publicKey, recentBlockhash: value.blockhash }).add(ix);
    tx.sign(signer);
    const before = await balance(payer);
    await h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
    expect(await balance(payer)).to.equal(before - AMOUNT);
    const policy = await policyOf(paid.policy);
    expect(policy.status).to.equal('Completed');
    at(Number(policy.type.next_payment_due) - 1);
    expect((await usage(paid.jwt, accepted)).body).to.deep.include({ admitted: true, policy: paid.policy });
  });

  it('/v1/tokens/issue claims a Completed subscription within its period and grace, not past it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const owner = await newWallet();
    const completed = (due: number): PolicyType => ({
      kind: 'Subscription', amount: '1000', auto_renew: true, max_renewals: 0, payment_frequency: 'Monthly', next_payment_due: String(due),
    });
    // the program completes a subscription at its last payment: one at least
    const current = await insertPolicy(h.env.db, { owner: owner.address, gateway: gw().address, policyType: completed(now + 1000), status: 'Completed', slot: 2, paymentCount: 1 });
    const ended = await insertPolicy(h.env.db, { owner: owner.address, gateway: gw().address, policyType: completed(now - 259_201), status: 'Completed', slot: 1, paymentCount: 1 });
    const ch = (await (await postJson(`${h.api.url}/v1/tokens/challenge`, { walletPublicKey: owner.address })).json()) as { nonce: string };
    const signature = Array.from(await ed.signAsync(new TextEncoder().encode(ch.nonce), owner.secretKey));
    const res = await postJson(`${h.api.url}/v1/tokens/issue`, { walletPublicKey: owner.address, nonce: ch.nonce, signature });
    const bundle = (await res.json()) as any;
    expect(res.status, JSON.stringify(bundle)).to.equal(200);
    expect(bundle.policies.map((c: any) => c.address)).to.deep.equal([current]);
    expect(bundle.policies[0]).to.include({ status: 'Completed', paymentStanding: 'paid', validUntil: now + 1000 + 259_200, renewalsRemaining: 0 });
    expect(bundle.policies.map((c: any) => c.address)).to.not.include(ended);
  });
});
