/**
 * x402://prepaid through the facilitator on a localnet started here: /supported and the
 * OpenAPI document list it; /verify accepts the credit's Payment transaction and refuses
 * forged or mismatched ones with the reason, sending nothing (nor does /settle); /settle
 * pays the credit and records it in Postgres; /usage draws each request's cost from it,
 * atomically across two API nodes, and refuses once it cannot cover one more; a counter
 * Redis lost is rebuilt from the ledger; a payer with credit left gets a JWT again without
 * paying, and keeps its credit after closing the completed policy; a net-mode gateway's
 * fee is paid on top of the credit; a middleware in remote mode sells and admits it.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Keypair, PublicKey, TransactionMessage, VersionedTransaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { signPaymentProof } from '../../commands/x402/proof.js';
import BN from 'bn.js';
import { accountNames, createPaymentPolicyIx, decodePaymentIx, type PolicyAccounts } from '../../commands/x402/program.js';
import { type AcceptedRequirement } from '../../commands/x402/requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../../commands/x402/requirement-forms.js';
import { prepaidCounterKey } from '../../commands/x402/prepaid/meter.js';
import { createCreditLedger } from '../../commands/x402/prepaid/ledger.js';
import { waitFor } from '../support/process.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { submitTransaction } from '../../infra/localnet/submit.js';
import { signedTransaction } from '../../infra/localnet/transactions.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { TestApi } from '../support/app.js';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { paymentRequired, x402Grant } from '../../commands/x402/middleware.js';
import { payAndFetch } from '../../commands/x402/client/pay.js';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

describe('x402://prepaid: a OneTime credit paid up front, drawn per request', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let second: TestApi;
  let key = '';
  let prepaid: AcceptedRequirement;
  let cheap: AcceptedRequirement;
  const post = (path: string, body: unknown, base = h.api.url) => call(base, 'POST', path, body, { 'x-api-key': key });
  const exchange = (payload: unknown, r = prepaid) => ({ x402Version: 2, paymentPayload: payload, paymentRequirements: r });
  const settle = async (payer: Keypair) => {
    const r = await post('/v1/x402/settle', exchange(payloadOf((await buildPayment(prepaid, { wallet: payer, rpc: h.rpc })).header)));
    expect(r.body.success, JSON.stringify(r.body)).to.equal(true);
    return r.body as { jwt: string; policy: string; transaction: string };
  };
  const use = (jwt: string, amount?: string, base = h.api.url) =>
    post('/v1/x402/usage', { jwt, paymentRequirements: prepaid, ...(amount !== undefined ? { amount } : {}) }, base);

  /** The payer's payment for `r`, its instructions changed by `edit`, signed again with a proof for `id`. */
  const forged = async (payer: Keypair, r: AcceptedRequirement, edit: (ixs: TransactionInstruction[]) => TransactionInstruction[], id = r.id) => {
    const built = await buildPayment(r, { wallet: payer, rpc: h.rpc });
    const msg = TransactionMessage.decompile(built.transaction.message);
    const tx = new VersionedTransaction(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: msg.recentBlockhash, instructions: edit(msg.instructions) }).compileToLegacyMessage());
    tx.sign([payer]);
    const signature = bs58.encode(tx.signatures[0]!);
    const proof = signPaymentProof(payer.secretKey, { requirementId: id, resource: prepaid.resource, transactionSignature: signature }, Math.floor(Date.now() / 1000));
    return { x402Version: 2, scheme: r.scheme, network: r.network, id, payload: { serializedTransaction: Buffer.from(tx.serialize()).toString('base64'), proof } };
  };
  /** The payer deletes its policy 1 and its user payment (for their rent), then a slot passes (a new blockhash). */
  const deleteAccounts = (payer: Keypair, policy: string): void => {
    const mint = new PublicKey(USDC_DEV);
    const accounts = { owner: payer.publicKey, user_payment: pdas.userPayment(payer.publicKey, mint), token_mint: mint, config: pdas.config(), rent_payer: payer.publicKey };
    const deleted = submitTransaction(h.ln.chain, signedTransaction(payer, [], [
      tributaryIx('delete_payment_policy', { ...accounts, payment_policy: new PublicKey(policy) }, { policy_id: 1 }),
      tributaryIx('delete_user_payment', accounts, {}),
    ], h.ln.chain.latestBlockhash().blockhash), { verifySignatures: true, commit: true });
    expect(deleted.kind === 'executed' && deleted.result.err === null, JSON.stringify(deleted)).to.equal(true);
    h.ln.chain.advanceSlot(); // the same payment signed again is another transaction
  };
  const isExecute = (ix: TransactionInstruction) => ix.programId.toBase58() === PROGRAM_ID && decodePaymentIx(ix.data)?.name === 'execute_payment';

  before(async () => {
    h = await startX402('prepaid');
    second = await h.secondNode();
    const gw = h.ln.fixtures.gateways[0]!;
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    key = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const terms = { scheme: 'x402://prepaid', network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV };
    const reg = await call(h.api.url, 'PUT', '/v1/x402/resources', {
      resource: 'https://merchant.example/search', description: 'search, 1000 per query from a prepaid credit',
      accepts: [{ ...terms, amount: '50000', pricePerRequest: '1000' }, { ...terms, amount: '1000', pricePerRequest: '1000' }],
    }, { 'x-api-key': key });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    [prepaid, cheap] = reg.body.accepts;
  });
  after(async () => { await h.close(); });

  it('is listed by /supported and described in the OpenAPI document', async () => {
    expect(prepaid).to.include({ scheme: 'x402://prepaid', amount: 50_000, pricePerRequest: 1000 });
    const s = await call(h.api.url, 'GET', '/v1/x402/supported');
    expect(s.body.kinds.map((k: any) => k.scheme)).to.include('x402://prepaid');
    const doc = await (await fetch(`${h.api.url}/openapi.yaml`)).text();
    expect(doc).to.contain('x402://prepaid');
    expect(doc).to.contain('pricePerRequest');
  });

  it('refuses forged and mismatched payments with the reason, and sends nothing', async () => {
    const payer = h.payer();
    const cases: [unknown, AcceptedRequirement, RegExp][] = [
      [await forged(payer, prepaid, (ixs) => ixs.filter((ix) => !isExecute(ix))), prepaid, /pays its credit in the same transaction: execute_payment by the payer is missing/],
      // a credit of 1000 presented as the credit of 50000
      [await forged(payer, cheap, (ixs) => ixs, prepaid.id), prepaid, /the credit \(the OneTime amount\) is 1000; the requirement asks 50000/],
      [await forged(payer, cheap, (ixs) => ixs), prepaid, /the payment names requirement \w+, which this resource does not accept/],
      [await forged(payer, prepaid, (ixs) => ixs.map((ix) => (isExecute(ix) ? { ...ix, data: Buffer.from([...ix.data.subarray(0, 8), 1, 1, 0, 0, 0, 0, 0, 0, 0]) } : ix))), prepaid,
        /execute_payment of a prepaid credit carries no amount/],
    ];
    const landed = h.txCount();
    const calls = h.rpcCalls().length;
    for (const [payload, r, reason] of cases) {
      const v = await post('/v1/x402/verify', exchange(payload, r));
      expect(v.body.isValid, JSON.stringify(v.body)).to.equal(false);
      expect(v.body.invalidReason).to.match(reason);
      const s = await post('/v1/x402/settle', exchange(payload, r));
      expect(s.body.success).to.equal(false);
      expect(s.body.errorReason).to.match(reason);
    }
    expect(h.rpcCalls().slice(calls)).to.not.include('sendTransaction');
    expect(h.txCount()).to.equal(landed);
  });

  it('verifies the credit without sending, settles it once, records it, and draws requests until it is used up', async () => {
    const payer = h.payer();
    const payload = payloadOf((await buildPayment(prepaid, { wallet: payer, rpc: h.rpc })).header);
    const landed = h.txCount();
    expect((await post('/v1/x402/verify', exchange(payload))).body).to.deep.equal({ isValid: true, payer: payer.publicKey.toBase58() });
    expect(h.txCount()).to.equal(landed);
    const s = await post('/v1/x402/settle', exchange(payload));
    expect(s.body, JSON.stringify(s.body)).to.include({ success: true, payer: payer.publicKey.toBase58() });
    expect(h.txCount()).to.equal(landed + 1);
    const row = await h.env.db.selectFrom('prepaid_credits').selectAll().where('policy', '=', s.body.policy).executeTakeFirstOrThrow();
    expect(row).to.include({ payer: payer.publicKey.toBase58(), requirement_id: prepaid.id, credit: '50000', transaction: s.body.transaction });

    const first = await use(s.body.jwt);
    expect(first.body).to.deep.include({ admitted: true, scheme: 'x402://prepaid', policy: s.body.policy });
    expect(first.body.prepaid).to.include({ chunk: '1000', used: '1000', credit: '50000', remaining: '49000' });
    expect((await use(s.body.jwt, '48000')).body.prepaid).to.include({ remaining: '1000' });
    const over = await use(s.body.jwt, '1001');
    expect(over.body).to.deep.equal({ admitted: false, reason: 'the prepaid credit of 50000 is used up (49000 used, this request costs 1001); pay again for a new credit' });
    expect((await use(s.body.jwt, undefined, second.url)).body.prepaid).to.include({ remaining: '0' });
    expect((await use(s.body.jwt)).body.admitted).to.equal(false);
    expect(h.txCount(), 'drawing the credit sends nothing').to.equal(landed + 1);
  });

  it('admits at most the credit when two nodes draw it at once', async () => {
    const a = await settle(h.payer());
    const answers = await Promise.all(Array.from({ length: 80 }, (_, i) => use(a.jwt, undefined, i % 2 === 0 ? h.api.url : second.url)));
    expect(answers.filter((r) => r.body.admitted === true)).to.have.length(50);
    const rows = await h.env.db.selectFrom('prepaid_usage').select((e) => e.fn.sum<string>('amount').as('total')).where('policy', '=', a.policy).executeTakeFirstOrThrow();
    expect(String(rows.total)).to.equal('50000');
  });

  it('rebuilds a counter Redis lost from the ledger', async () => {
    const a = await settle(h.payer());
    await use(a.jwt, '30000');
    await h.env.redis.del(prepaidCounterKey(h.api.ctx.config.redis.prefix, a.policy));
    expect((await use(a.jwt, '20000', second.url)).body.prepaid).to.include({ used: '50000', remaining: '0' });
    expect((await use(a.jwt, '1')).body.admitted).to.equal(false);
  });

  it('gives a payer with credit left a JWT again without paying, also after it closed the policy; a used credit is bought anew', async () => {
    const payer = h.payer();
    const a = await settle(payer);
    await use(a.jwt, '10000');
    const owner = payer.publicKey.toBase58();
    const proofFor = () => signPaymentProof(payer.secretKey, { requirementId: prepaid.id, resource: prepaid.resource, transactionSignature: undefined }, Math.floor(Date.now() / 1000));
    const existing = () => ({ x402Version: 2, scheme: prepaid.scheme, network: prepaid.network, id: prepaid.id, payload: { payer: owner, proof: proofFor() } });
    const landed = h.txCount();
    const again = await post('/v1/x402/settle', exchange(existing()));
    expect(again.body, JSON.stringify(again.body)).to.include({ success: true, policy: a.policy });
    expect(again.body.transaction).to.equal(undefined);
    expect(h.txCount()).to.equal(landed);

    // the payer closes its completed policy for the rent: the credit it bought is still honoured
    const userPayment = pdas.userPayment(payer.publicKey, new PublicKey(USDC_DEV));
    const close = tributaryIx('delete_payment_policy', {
      owner: payer.publicKey, user_payment: userPayment, token_mint: new PublicKey(USDC_DEV), payment_policy: new PublicKey(a.policy),
      config: pdas.config(), rent_payer: payer.publicKey,
    }, { policy_id: 1 });
    const out = submitTransaction(h.ln.chain, signedTransaction(payer, [], [close], h.ln.chain.latestBlockhash().blockhash), { verifySignatures: true, commit: true });
    expect(out.kind === 'executed' && out.result.err === null, JSON.stringify(out)).to.equal(true);
    expect((await use(again.body.jwt, '40000')).body.prepaid).to.include({ remaining: '0' });

    const used = await post('/v1/x402/settle', exchange(existing()));
    expect(used.body.success).to.equal(false);
    expect(used.body.errorReason).to.match(/holds no active payment policy with the terms/);
    const fresh = await settle(payer);
    expect(fresh.policy).to.not.equal(a.policy);
    expect(fresh.transaction).to.be.a('string');
  });

  it('refuses a OneTime policy of the credit\'s amount paid outside x402 (an invoice): no credit recorded, nothing drawn, a payment buys a new credit', async () => {
    const payer = h.payer();
    const owner = payer.publicKey.toBase58();
    // the merchant's invoice of 50000 (memo "invoice-1"), created and executed by the payer at the chain: the same
    // recipient, gateway and amount as the prepaid credit, never sold by this service
    const built = await buildPayment(prepaid, { wallet: payer, rpc: h.rpc });
    const msg = TransactionMessage.decompile(built.transaction.message);
    const names = accountNames('create_payment_policy');
    const ixs = msg.instructions.map((ix) => {
      if (ix.programId.toBase58() !== PROGRAM_ID || decodePaymentIx(ix.data)?.name !== 'create_payment_policy') return ix;
      const accounts = Object.fromEntries(names.map((n, i) => [n, ix.keys[i]!.pubkey.toBase58()])) as unknown as PolicyAccounts;
      const invoice = { OneTime: { amount: new BN(50_000), due_date: new BN(0), expiry_date: null, padding: new Array<number>(103).fill(0) } };
      return createPaymentPolicyIx(PROGRAM_ID, accounts, invoice, 'invoice-1');
    });
    const paid = submitTransaction(h.ln.chain, signedTransaction(payer, [], ixs, h.ln.chain.latestBlockhash().blockhash), { verifySignatures: true, commit: true });
    expect(paid.kind === 'executed' && paid.result.err === null, JSON.stringify(paid)).to.equal(true);
    const userPayment = pdas.userPayment(payer.publicKey, new PublicKey(USDC_DEV));
    const invoicePolicy = pdas.paymentPolicy(userPayment, 1).toBase58();
    const onChain = await readProgramAccount(h.rpc, invoicePolicy, 'PaymentPolicy', { programId: PROGRAM_ID, commitment: 'confirmed' });
    expect(onChain.kind === 'found' && onChain.data['status']).to.equal('Completed');

    const proof = signPaymentProof(payer.secretKey, { requirementId: prepaid.id, resource: prepaid.resource, transactionSignature: undefined }, Math.floor(Date.now() / 1000));
    const landed = h.txCount();
    const existing = await post('/v1/x402/settle', exchange({ x402Version: 2, scheme: prepaid.scheme, network: prepaid.network, id: prepaid.id, payload: { payer: owner, proof } }));
    expect(existing.body.success, JSON.stringify(existing.body)).to.equal(false);
    expect(existing.body.errorReason).to.match(/holds no active payment policy with the terms/);
    expect(await h.env.db.selectFrom('prepaid_credits').select('policy').where('policy', '=', invoicePolicy).executeTakeFirst()).to.equal(undefined);
    expect(h.txCount()).to.equal(landed);

    // a Payment transaction is sent and buys a credit of its own, not the invoice
    const bought = await settle(payer);
    expect(bought.policy).to.not.equal(invoicePolicy);
    expect(bought.transaction).to.be.a('string');
    expect(h.txCount()).to.equal(landed + 1);
    expect((await use(bought.jwt, '50000')).body.prepaid).to.include({ credit: '50000', remaining: '0' });
    expect(await h.env.db.selectFrom('prepaid_credits').select('policy').where('policy', '=', invoicePolicy).executeTakeFirst()).to.equal(undefined);
  });

  it('gives a JWT again for the credit left on a policy the payer closed: the same policy, the rest drawable, then refused once used up', async () => {
    const payer = h.payer();
    const owner = payer.publicKey.toBase58();
    const a = await settle(payer);
    await use(a.jwt, '10000');
    const userPayment = pdas.userPayment(payer.publicKey, new PublicKey(USDC_DEV));
    const close = tributaryIx('delete_payment_policy', {
      owner: payer.publicKey, user_payment: userPayment, token_mint: new PublicKey(USDC_DEV), payment_policy: new PublicKey(a.policy),
      config: pdas.config(), rent_payer: payer.publicKey,
    }, { policy_id: 1 });
    const out = submitTransaction(h.ln.chain, signedTransaction(payer, [], [close], h.ln.chain.latestBlockhash().blockhash), { verifySignatures: true, commit: true });
    expect(out.kind === 'executed' && out.result.err === null, JSON.stringify(out)).to.equal(true);
    const gone = await readProgramAccount(h.rpc, a.policy, 'PaymentPolicy', { programId: PROGRAM_ID, commitment: 'confirmed' });
    expect(gone.kind).to.not.equal('found');

    // the first JWT has expired: a fresh existing-policy proof must reach the 40000 left
    const existing = () => exchange({
      x402Version: 2, scheme: prepaid.scheme, network: prepaid.network, id: prepaid.id,
      payload: { payer: owner, proof: signPaymentProof(payer.secretKey, { requirementId: prepaid.id, resource: prepaid.resource, transactionSignature: undefined }, Math.floor(Date.now() / 1000)) },
    });
    const landed = h.txCount();
    const again = await post('/v1/x402/settle', existing());
    expect(again.body, JSON.stringify(again.body)).to.include({ success: true, policy: a.policy });
    expect(again.body.transaction).to.equal(undefined);
    expect(again.body.jwt).to.not.equal(a.jwt);
    const drawn = await use(again.body.jwt, '40000', second.url);
    expect(drawn.body, JSON.stringify(drawn.body)).to.include({ admitted: true });
    expect(drawn.body.prepaid).to.include({ credit: '50000', remaining: '0' });
    expect((await use(again.body.jwt, '1')).body.admitted).to.equal(false);
    const row = await h.env.db.selectFrom('prepaid_credits').select('credit').where('policy', '=', a.policy).executeTakeFirstOrThrow();
    expect(row.credit, 'serving the credit again bought nothing').to.equal('50000');

    const used = await post('/v1/x402/settle', existing());
    expect(used.body.success).to.equal(false);
    expect(used.body.errorReason).to.match(/holds no active payment policy with the terms/);
    expect(h.txCount()).to.equal(landed);
  });

  it('counts a credit bought again at a reused address (its policy and user payment deleted and created anew): drawn, not refused as used up', async () => {
    const payer = h.payer();
    const a = await settle(payer);
    await use(a.jwt, '10000', second.url); // the second node keeps the credit as it was
    expect((await use(a.jwt, '40000')).body.prepaid).to.include({ remaining: '0' });

    // the payer deletes its completed policy and its user payment: the program counts its policies from zero again
    deleteAccounts(payer, a.policy);

    const b = await settle(payer);
    expect(b.policy, 'policy 1 of the new user payment: the same address').to.equal(a.policy);
    expect(b.transaction).to.be.a('string').and.not.equal(a.transaction);
    const first = await use(b.jwt, '1000');
    expect(first.body, JSON.stringify(first.body)).to.include({ admitted: true });
    expect(first.body.prepaid).to.include({ credit: '100000', remaining: '49000' });
    const elsewhere = await use(b.jwt, '1000', second.url);
    expect(elsewhere.body, JSON.stringify(elsewhere.body)).to.include({ admitted: true });
    expect(elsewhere.body.prepaid).to.include({ remaining: '48000' });

    // two payments of one address (two policies created within one second share a created_at: the transactions tell them apart)
    const payments = await h.env.db.selectFrom('prepaid_credit_payments').select(['amount', 'transaction']).where('policy', '=', a.policy).orderBy('paid_at').execute();
    expect(payments.map((p) => [p.amount, p.transaction])).to.deep.equal([['50000', a.transaction], ['50000', b.transaction]]);
    // the same payment recorded again (an existing-policy settlement) counts nothing
    const again = await post('/v1/x402/settle', exchange({
      x402Version: 2, scheme: prepaid.scheme, network: prepaid.network, id: prepaid.id,
      payload: { payer: payer.publicKey.toBase58(), proof: signPaymentProof(payer.secretKey, { requirementId: prepaid.id, resource: prepaid.resource, transactionSignature: undefined }, Math.floor(Date.now() / 1000)) },
    }));
    expect(again.body, JSON.stringify(again.body)).to.include({ success: true, policy: a.policy });
    const row = await h.env.db.selectFrom('prepaid_credits').select('credit').where('policy', '=', a.policy).executeTakeFirstOrThrow();
    expect(row.credit).to.equal('100000');
  });

  it('serves the terms paid last when a reused address is bought again under other terms, with what was left of the credit', async () => {
    const payer = h.payer();
    const a = await settle(payer);
    await use(a.jwt, '20000');
    deleteAccounts(payer, a.policy);

    const b = await post('/v1/x402/settle', exchange(payloadOf((await buildPayment(cheap, { wallet: payer, rpc: h.rpc })).header), cheap));
    expect(b.body, JSON.stringify(b.body)).to.include({ success: true, policy: a.policy });
    const drawn = await post('/v1/x402/usage', { jwt: b.body.jwt, paymentRequirements: cheap, amount: '1000' });
    expect(drawn.body, JSON.stringify(drawn.body)).to.include({ admitted: true });
    expect(drawn.body.prepaid).to.include({ credit: '51000', remaining: '30000' });
    const old = await use(a.jwt, '1000');
    expect(old.body.admitted).to.equal(false);
    expect(old.body.reason).to.match(/bought by another payer or under other terms/);
  });

  it('starts a credit bought at a reused address from another gateway from what was drawn there: one merchant\'s credit never serves another', async () => {
    const ledger = createCreditLedger(h.env.db);
    const policy = Keypair.generate().publicKey.toBase58();
    const base = { policy, payer: 'payer', requirementId: 'r1', credit: 50_000n, policyCreatedAt: '100' };
    expect(await ledger.recordCredit({ ...base, gateway: 'gateway-a', transaction: 'tx-1' })).to.equal(true);
    expect(await ledger.recordCredit({ ...base, gateway: 'gateway-a', transaction: 'tx-1' }), 'the same payment again').to.equal(false);
    expect(await ledger.recordCredit({ ...base, gateway: 'gateway-a' }), 'the same policy, no transaction').to.equal(false);
    let asked = 0;
    const usedNow = async () => { asked += 1; return 20_000n; };
    expect(await ledger.recordCredit({ ...base, gateway: 'gateway-b', requirementId: 'r2', credit: 1_000n, transaction: 'tx-2', policyCreatedAt: '200' }, usedNow)).to.equal(true);
    expect(asked).to.equal(1);
    expect(await ledger.credit(policy)).to.include({ credit: 21_000n, gateway: 'gateway-b', requirementId: 'r2', policyCreatedAt: '200' });
    const payments = await h.env.db.selectFrom('prepaid_credit_payments').select(['gateway', 'amount']).where('policy', '=', policy).orderBy('paid_at').execute();
    expect(payments).to.deep.equal([{ gateway: 'gateway-a', amount: '50000' }, { gateway: 'gateway-b', amount: '1000' }]);
  });

  it('pays a net-mode gateway\'s fee on top of the credit: the recipient receives the whole credit', async () => {
    const gw = h.ln.fixtures.gateways[2]!;
    const authority = Keypair.fromSecretKey(bs58.decode(gw.authoritySecretKey));
    const flags = tributaryIx('update_gateway_feature_flags', { gateway: new PublicKey(gw.address), authority: authority.publicKey }, { args: { feature_flags: 0x02 } });
    const out = submitTransaction(h.ln.chain, signedTransaction(authority, [], [flags], h.ln.chain.latestBlockhash().blockhash), { verifySignatures: true, commit: true });
    expect(out.kind === 'executed' && out.result.err === null, JSON.stringify(out)).to.equal(true);
    const jwt = await gatewayJwt(h, gw.address, gw.authority);
    const netKey = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
    const { id: _id, extra: _extra, ...terms } = prepaid;
    const r = acceptedRequirement(normalizeRequirement({ ...terms, gateway: gw.address, recipient: gw.authority }, PROGRAM_ID), prepaid.resource);
    const config = await readProgramAccount(h.rpc, pdas.config().toBase58(), 'ProgramConfig', { programId: PROGRAM_ID });
    if (config.kind !== 'found') throw new Error('no config');
    const payer = h.payer();
    const parties = [payer.publicKey.toBase58(), gw.authority, gw.feeRecipient, config.data['fee_recipient'] as string];
    const bal = async (o: string) => BigInt((await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(o, USDC_DEV)]).catch(() => ({ value: { amount: '0' } }))).value.amount);
    const before = await Promise.all(parties.map(bal));
    const payment = payloadOf((await buildPayment(r, { wallet: payer, rpc: h.rpc })).header);
    const s = await call(h.api.url, 'POST', '/v1/x402/settle', exchange(payment, r), { 'x-api-key': netKey });
    expect(s.body.success, JSON.stringify(s.body)).to.equal(true);
    const after = await Promise.all(parties.map(bal));
    const fee = (50_000n * BigInt(gw.feeBps)) / 10_000n;
    const protocolCut = (fee * BigInt(config.data['protocol_share_bps'] as number)) / 10_000n;
    expect(after.map((a, i) => a - before[i]!)).to.deep.equal([-(50_000n + fee), 50_000n, fee - protocolCut, protocolCut]);
  });

  it('takes back the draw of a request that ended unanswered: not paid for, its room given back to the credit', async () => {
    const a = await settle(h.payer());
    const { resource: _r, id: _i, extra: _e, ...input } = prepaid;
    const deps = {
      rpc: h.rpc, programId: PROGRAM_ID, redis: h.api.ctx.redis, redisPrefix: h.api.ctx.config.redis.prefix, signer: h.api.node.keyRing,
      credits: createCreditLedger(h.env.db),
    };
    const app = express();
    const guard = paymentRequired([input], deps);
    app.get('/search', guard, (_req, res) => { res.json({ grant: x402Grant(res) }); });
    app.get('/hangs', guard, () => undefined); // the upstream never answers
    const server = await new Promise<Server>((resolve) => { const srv = app.listen(0, '127.0.0.1', () => resolve(srv)); });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (path: string, signal?: AbortSignal) => {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${a.jwt}` }, ...(signal ? { signal } : {}) });
      return (await res.json()) as any;
    };
    const draws = async () => (await h.env.db.selectFrom('prepaid_usage').select(['slice']).where('policy', '=', a.policy).orderBy('slice').execute()).map((r) => r.slice);
    const counter = () => h.env.redis.get(prepaidCounterKey(h.api.ctx.config.redis.prefix, a.policy));
    /** a request to /hangs, abandoned once its draw is in the ledger; then `meanwhile` */
    const abandoned = async (meanwhile: () => Promise<unknown> = async () => undefined) => {
      const before = (await draws()).length;
      const abort = new AbortController();
      const pending = get('/hangs', abort.signal).catch(() => undefined);
      await waitFor(async () => (await draws()).length > before, 10_000, 'the draw written to the ledger');
      await meanwhile();
      abort.abort();
      await pending;
    };
    try {
      expect((await get('/search')).grant.prepaid).to.include({ used: '1000', remaining: '49000' });
      await abandoned();
      await waitFor(async () => (await draws()).length === 1 && await counter() === '1000', 5000, 'the unanswered draw taken back, its room given back');
      expect((await get('/search')).grant.prepaid, 'the credit drawn only for the requests served').to.include({ used: '2000', remaining: '48000' });
      // a draw others drew after (a slice in the middle): its row goes, its slice is drawn again by the next request
      await abandoned(() => get('/search'));
      await waitFor(async () => (await draws()).length === 3, 5000, 'the unanswered draw in the middle taken back');
      expect(await draws()).to.deep.equal(['[0,1000)', '[1000,2000)', '[3000,4000)']);
      expect(await counter()).to.equal('4000');
      expect((await get('/search')).grant.prepaid, 'the middle draw\'s room drawn again: 4 requests served, 4 paid').to.include({ used: '4000', remaining: '46000' });
      expect(await draws()).to.deep.equal(['[0,1000)', '[1000,2000)', '[2000,3000)', '[3000,4000)']);
      expect(await counter()).to.equal('4000');
    } finally {
      server.closeAllConnections();
      await new Promise((res) => server.close(res));
    }
  });

  it('is sold and admitted by a middleware in remote mode, paid with the client library', async () => {
    const { resource: _r, id: _i, extra: _e, ...input } = prepaid;
    const app = express();
    app.get('/search', paymentRequired([input], { facilitatorUrl: h.api.url, apiKey: key, programId: PROGRAM_ID }), (_req, res) => {
      res.json({ results: [], grant: x402Grant(res) });
    });
    const server = await new Promise<Server>((resolve) => { const srv = app.listen(0, '127.0.0.1', () => resolve(srv)); });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/search`;
      const wallet = h.payer();
      const r = await payAndFetch(url, { wallet, rpcUrl: h.ln.rpcUrl, scheme: 'x402://prepaid' });
      expect(r.response.status).to.equal(200);
      const body = (await r.response.json()) as any;
      expect(body.grant).to.deep.include({ payer: wallet.publicKey.toBase58(), scheme: 'x402://prepaid', requirementId: prepaid.id });
      expect(body.grant.prepaid).to.include({ chunk: '1000', remaining: '49000' });
    } finally {
      await new Promise((res) => server.close(res));
    }
  });
});
