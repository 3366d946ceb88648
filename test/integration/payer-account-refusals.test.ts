/**
 * What the payer account refuses, each with a 4xx in the error envelope and nothing sent
 * to the chain: a sign-in with a used, foreign or mis-signed nonce; a gateway JWT where a
 * payer JWT is asked and the other way round; and at POST /v1/me/transactions a transfer,
 * an approve, a pause bundled with a transfer, another wallet's policy, a transaction the
 * signed-in wallet did not sign or does not pay for, and bytes that are no transaction.
 */
import { expect } from 'chai';
import bs58 from 'bs58';
import { parse } from 'yaml';
import { Keypair, PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { approveIx, associatedTokenAddress, transferIx } from '../../src/kernel/domain/spl-token.js';
import { programInstruction } from '../../infra/solana/instructions.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { waitFor } from '../support/process.js';
import type { TestApi } from '../support/app.js';
import { DEMO_PATH } from './x402-harness.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';
import { call, signIn, signText, signUnsigned, startMeApi } from './payer-account-support.js';

describe('payer account: refusals', function () {
  this.timeout(120_000);
  let s: SchedulerHarness;
  let me: TestApi;
  let payer: Keypair;
  let other: Keypair;
  let token: string;
  let policy: string;
  let otherPolicy: string;
  let mint: string;

  const sends = (): number => s.h.rpcCalls().filter((m) => m === 'sendTransaction').length;

  before(async () => {
    s = await startSchedulerHarness('payer-refuse');
    me = await startMeApi(s.h);
    payer = s.h.payer();
    other = s.h.payer();
    const mine = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    const theirs = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: other, rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
    policy = mine.paid!.policy!;
    otherPolicy = theirs.paid!.policy!;
    mint = mine.paid!.requirement.tokenMint;
    token = await signIn(me, payer);
    await waitFor(async () => {
      const rows = await s.h.env.db.selectFrom('payment_policies').select('address').where('address', 'in', [policy, otherPolicy]).execute();
      return rows.length === 2;
    }, 20_000, 'both policies in the read model');
  });
  after(async () => { await me?.close(); await s?.close(); });

  async function signedBy(signers: Keypair[], ixs: TransactionInstruction[]): Promise<string> {
    const { value } = await s.h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: signers[0]!.publicKey, recentBlockhash: value.blockhash }).add(...ixs);
    tx.sign(...signers);
    return tx.serialize().toString('base64');
  }

  /** the program's pause of `address` (owned through the user payment of `owner`), with `owner` as the owner account */
  function pauseIx(owner: PublicKey, address: string, policyId: number): TransactionInstruction {
    const pdas = createPdaDeriver(s.config.solana.programId);
    return programInstruction(pdas.programId, 'change_payment_policy_status', {
      owner: owner.toBase58(), user_payment: pdas.userPayment(owner.toBase58(), mint), token_mint: mint, payment_policy: address, config: pdas.config(),
    }, { policy_id: policyId, new_status: { Paused: {} } });
  }

  async function refused(transaction: string, reason: RegExp): Promise<void> {
    const before = sends();
    const r = await call(me, 'POST', '/v1/me/transactions', { token, body: { transaction } });
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.code).to.equal('invalid_input');
    expect(r.body.error).to.match(reason);
    expect(sends(), 'nothing sent').to.equal(before);
  }

  it('sign-in: a used nonce, a nonce of another wallet, another key\'s signature and a gateway sign-in text are 401', async () => {
    const wallet = payer.publicKey.toBase58();
    const ch = await call(me, 'POST', '/v1/me/auth/challenge', { body: { wallet } });
    expect(ch.body.nonce).to.match(/^tributary-payer-sign-in\|/);
    const bad = await call(me, 'POST', '/v1/me/auth/verify', { body: { wallet, nonce: ch.body.nonce, signature: await signText(ch.body.nonce, other) } });
    expect(bad.status).to.equal(401);
    const used = await call(me, 'POST', '/v1/me/auth/verify', { body: { wallet, nonce: ch.body.nonce, signature: await signText(ch.body.nonce, payer) } });
    expect(used.status, 'the nonce was taken by the failed attempt: single use').to.equal(401);
    const theirs = await call(me, 'POST', '/v1/me/auth/challenge', { body: { wallet: other.publicKey.toBase58() } });
    const foreign = await call(me, 'POST', '/v1/me/auth/verify', { body: { wallet, nonce: theirs.body.nonce, signature: await signText(theirs.body.nonce, payer) } });
    expect(foreign.status).to.equal(401);
    const gw = await call(me, 'POST', `/v1/gateway/${s.gateway}/auth/challenge`);
    const gatewayText = await call(me, 'POST', '/v1/me/auth/verify', { body: { wallet, nonce: gw.body.nonce, signature: await signText(gw.body.nonce, payer) } });
    expect(gatewayText.status).to.equal(401);
    expect(gatewayText.body.error).to.match(/not a tributary-payer-sign-in challenge/);
    expect((await call(me, 'POST', '/v1/me/auth/challenge', { body: { wallet: 'not-a-key' } })).status).to.equal(400);
    expect((await call(me, 'GET', '/v1/me/subscriptions')).status).to.equal(401);
    expect((await call(me, 'GET', '/v1/me/payments', { token: 'garbage' })).status).to.equal(401);
  });

  it('the OpenAPI document lists the payer routes, each behind the bearer token but sign-in', async () => {
    const doc = parse(await (await fetch(`${me.url}/openapi.yaml`)).text()) as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    const routes = ['/v1/me/subscriptions get', '/v1/me/payments get', '/v1/me/policies/{address}/{action} post', '/v1/me/approvals/revoke post', '/v1/me/transactions post'];
    for (const r of routes) {
      const [path, method] = r.split(' ') as [string, string];
      expect(doc.paths[path]?.[method]?.security, r).to.deep.equal([{ BearerAuth: [] }]);
    }
    expect(doc.paths['/v1/me/auth/verify']?.['post']?.security).to.equal(undefined);
  });

  it('a nonce issued on one node signs in on another, once', async () => {
    const second = await startMeApi(s.h);
    try {
      const wallet = payer.publicKey.toBase58();
      const ch = await call(me, 'POST', '/v1/me/auth/challenge', { body: { wallet } });
      const body = { wallet, nonce: ch.body.nonce, signature: await signText(ch.body.nonce, payer) };
      const there = await call(second, 'POST', '/v1/me/auth/verify', { body });
      expect(there.status, JSON.stringify(there.body)).to.equal(200);
      expect((await call(me, 'GET', '/v1/me/subscriptions', { token: there.body.token })).status).to.equal(200);
      expect((await call(me, 'POST', '/v1/me/auth/verify', { body })).status, 'used on the other node').to.equal(401);
    } finally {
      await second.close();
    }
  });

  it('a gateway JWT is no payer JWT, and a payer JWT is no gateway JWT', async () => {
    const ch = await call(me, 'POST', `/v1/gateway/${s.gateway}/auth/challenge`);
    const v = await call(me, 'POST', `/v1/gateway/${s.gateway}/auth/verify`, {
      body: { signer: s.signer.publicKey.toBase58(), nonce: ch.body.nonce, signature: await signText(ch.body.nonce, s.signer) },
    });
    expect(v.status, JSON.stringify(v.body)).to.equal(200);
    const gatewayToken = v.body.token as string;
    expect((await call(me, 'GET', `/v1/gateway/${s.gateway}/merchant/policies`, { token: gatewayToken })).status, 'the gateway token works where it belongs').to.equal(200);
    const asPayer = await call(me, 'GET', '/v1/me/subscriptions', { token: gatewayToken });
    expect(asPayer.status).to.equal(401);
    expect((await call(me, 'POST', `/v1/me/policies/${policy}/pause`, { token: gatewayToken })).status).to.equal(401);
    const asGateway = await call(me, 'GET', `/v1/gateway/${s.gateway}/merchant/policies`, { token });
    expect(asGateway.status).to.equal(401);
    expect((await call(me, 'GET', '/v1/me/subscriptions', { token })).status, 'the payer token works where it belongs').to.equal(200);
  });

  it('actions: another wallet\'s policy is 403, an unknown one 404, an unknown action 400', async () => {
    expect((await call(me, 'POST', `/v1/me/policies/${otherPolicy}/pause`, { token })).status).to.equal(403);
    expect((await call(me, 'POST', `/v1/me/policies/${Keypair.generate().publicKey.toBase58()}/cancel`, { token })).status).to.equal(404);
    expect((await call(me, 'POST', `/v1/me/policies/${policy}/explode`, { token })).status).to.equal(400);
    expect((await call(me, 'POST', '/v1/me/approvals/revoke', { token, body: {} })).status).to.equal(400);
  });

  it('transactions: a transfer, an approve, a pause with a transfer, another wallet\'s policy, a foreign signer and garbage are refused, nothing sent', async () => {
    const wallet = payer.publicKey.toBase58();
    const source = associatedTokenAddress(wallet, mint);
    const steal = transferIx(source, associatedTokenAddress(other.publicKey.toBase58(), mint), wallet, 1n);
    await refused(await signedBy([payer], [steal]), /instruction 0: a token program instruction other than Revoke/);
    await refused(await signedBy([payer], [approveIx(source, other.publicKey.toBase58(), wallet, 1n)]), /other than Revoke/);
    const built = await call(me, 'POST', `/v1/me/policies/${policy}/pause`, { token });
    expect(built.status).to.equal(200);
    const pause = Transaction.from(Buffer.from(built.body.transaction, 'base64')).instructions[0]!;
    await refused(await signedBy([payer], [pause, steal]), /instruction 1: a token program instruction other than Revoke/);
    const otherId = 1; // each demo payer's first policy
    await refused(await signedBy([payer], [pauseIx(payer.publicKey, otherPolicy, otherId)]), /names a policy that is not one of/);
    await refused(await signedBy([payer, other], [pauseIx(other.publicKey, otherPolicy, otherId)]), /needs 2 signers/);
    await refused(await signedBy([other], [pauseIx(other.publicKey, otherPolicy, otherId)]), /fee payer is .*, not the signed-in wallet/);
    await refused(built.body.transaction, /not signed by/);
    const forged = Transaction.from(Buffer.from(signUnsigned(built.body.transaction, payer), 'base64'));
    forged.signatures[0]!.signature = Buffer.from(bs58.decode(bs58.encode(Buffer.alloc(64, 7))));
    await refused(forged.serialize({ verifySignatures: false }).toString('base64'), /not signed by/);
    await refused('%%% not base64 %%%', /base64/);
    await refused(Buffer.from('hello, not a transaction').toString('base64'), /not a Solana wire transaction/);
    // the unsigned pause, signed by the wallet, is taken: the refusals were about their content
    const sent = sends();
    const ok = await call(me, 'POST', '/v1/me/transactions', { token, body: { transaction: signUnsigned(built.body.transaction, payer) } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(sends(), 'the count of sends sees this node\'s sends').to.equal(sent + 1);
    expect(ok.body.instructions).to.deep.equal(['change_payment_policy_status']);
  });
});
