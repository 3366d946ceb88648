/**
 * The payment-gated protocol end to end against a localnet started here: the 402 with its
 * exact header and body, a paid 200 whose JWT verifies through /v1/jwks, the bearer 200,
 * one policy for a Payment header sent twice, an existing policy serving a second payment,
 * and the bearer refused once the policy is paused, the JWT forged or expired.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { PublicKey, type Keypair } from '@solana/web3.js';
import { buildPayment, resignPaymentHeader } from '../../commands/x402/payment-transaction.js';
import { parseKeyValueHeader, type AcceptedRequirement } from '../../commands/x402/requirements.js';
import { createTokenVerifier } from '../../commands/x402/client/verify-token.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { signedTransaction } from '../../infra/localnet/transactions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const MINT = new PublicKey(USDC_DEV);

describe('x402 protocol: 402, Payment, bearer', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let offsetMs = 0;
  const clock = { now: () => Date.now() + offsetMs };
  let url: string;
  let deferred: AcceptedRequirement;

  const get = async (headers: Record<string, string> = {}) => {
    const res = await fetch(url, { headers });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const pay = async (payer: Keypair, r: AcceptedRequirement) => (await buildPayment(r, { wallet: payer, rpc: h.rpc })).header;
  const policiesOf = (payer: Keypair) => h.ln.ledger().filter((e) => e.name === 'PaymentPolicyCreated'
    && e.data['user_payment'] === pdas.userPayment(payer.publicKey, MINT).toBase58());

  before(async () => {
    h = await startX402('protocol', { X402_CACHE_MS: '200' }, { clock });
    url = `${h.api.url}${DEMO_PATH}`;
    deferred = (await h.accepts())[0]!;
  });
  after(async () => { await h.close(); });

  it('answers an unpaid request 402 with the Payment-Required header and the accepts body', async () => {
    const r = await get();
    expect(r.status).to.equal(402);
    const gw = h.ln.fixtures.gateways[0]!;
    const [d, p] = r.body.accepts;
    expect(d.id).to.match(/^[0-9a-f]{32}$/);
    expect(p.id).to.match(/^[0-9a-f]{32}$/).and.not.equal(d.id);
    const common = {
      network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV, currency: 'USDC', resource: url,
      extra: { programId: PROGRAM_ID, x402Version: 2 },
    };
    expect(r.body.accepts).to.deep.equal([
      {
        ...common, scheme: 'deferred', amount: 1_000_000, id: d.id, description: 'demo subscription', paymentFrequency: 'Monthly', autoRenew: true, maxRenewals: null,
        gracePeriodSeconds: 259_200,
      },
      {
        ...common, scheme: 'x402://payg', amount: 10_000, id: p.id, description: 'demo pay-as-you-go, metered per request',
        maxAmountPerPeriod: 1_000_000, periodLengthSeconds: 86_400, maxChunkAmount: 100_000,
        // the demo's exposure bound (X402_DEMO_PAYG_MAX_UNSETTLED: ten periods' cap) and the shortest expiry it accepts (a period and an hour)
        maxUnsettledAmount: 10_000_000, minExpirySeconds: 90_000,
      },
    ]);
    expect(r.headers.get('payment-required')).to.equal(
      `scheme=deferred,network=solana:localnet,resource=${url},id=${d.id},amount=1000000,currency=USDC,recipient=${gw.authority},gateway=${gw.address},tokenMint=${USDC_DEV}`,
    );
    expect(r.body).to.include({ x402Version: 2, code: 'payment_required', success: false });
    expect(r.body.error).to.be.a('string');
  });

  it('gives every node the same requirement ids', async () => {
    const other = await h.secondNode();
    const res = await fetch(`${other.url}${DEMO_PATH}`);
    const ids = ((await res.json()) as any).accepts.map((a: AcceptedRequirement) => a.id);
    expect(ids).to.deep.equal((await h.accepts()).map((a) => a.id));
  });

  let jwt = '';
  let payer: Keypair;
  let policy = '';
  it('settles a deferred payment: 200, Payment-Response, a JWT that verifies through /v1/jwks, the policy on chain', async () => {
    payer = h.payer();
    const before = h.txCount();
    const r = await get({ payment: await pay(payer, deferred) });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(Object.keys(r.body).sort()).to.deep.equal(['jwt', 'message']);
    const pr = parseKeyValueHeader(r.headers.get('payment-response')!);
    expect(pr).to.include({ scheme: 'deferred', network: 'solana:localnet', id: deferred.id });
    expect(pr['timestamp']).to.match(/^\d{13}$/);
    expect(pr['transaction']).to.match(/^[1-9A-HJ-NP-Za-km-z]{87,88}$/);
    expect(h.txCount()).to.equal(before + 1);
    policy = pr['policy']!;
    jwt = r.body.jwt;

    const verifier = createTokenVerifier({ jwksUrl: `${h.api.url}/v1/jwks`, gateway: deferred.gateway });
    const claims = await verifier.verifyX402Token(jwt, { requirementIds: [deferred.id] });
    expect(claims).to.include({ sub: payer.publicKey.toBase58(), role: 'x402', policy, requirementId: deferred.id, scheme: 'deferred', gateway: deferred.gateway });

    const acc = await readProgramAccount(h.rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    expect(acc.kind).to.equal('found');
    if (acc.kind !== 'found') return;
    expect(acc.data).to.include({ recipient: deferred.recipient, gateway: deferred.gateway, status: 'Active' });
    expect(acc.data['policy_type']).to.include({ kind: 'Subscription', amount: '1000000', auto_renew: true, payment_frequency: 'Monthly' });
  });

  it('serves the content to the bearer of the JWT', async () => {
    const r = await get({ authorization: `Bearer ${jwt}` });
    expect(r.status).to.equal(200);
    expect(r.body.content).to.be.a('string');
    expect(r.body.grant).to.deep.equal({ payer: payer.publicKey.toBase58(), policy, scheme: 'deferred', network: 'solana:localnet', requirementId: deferred.id });
  });

  it('creates one policy for the same payment sent twice: its header answered once, the payer\'s fresh proof answered alike', async () => {
    const p = h.payer();
    const header = await pay(p, deferred);
    const before = h.txCount();
    const [a, b] = await Promise.all([get({ payment: header }), get({ payment: header })]);
    const [ok, copy] = a.status === 200 ? [a, b] : [b, a];
    expect([a.status, b.status].sort()).to.deep.equal([200, 402]);
    expect(copy.body.error).to.match(/was used already/);
    expect((await get({ payment: header })).status, 'the same header once more').to.equal(402);
    const again = await get({ payment: resignPaymentHeader(header, p, deferred.resource) });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(ok.body);
    expect(again.headers.get('payment-response')).to.equal(ok.headers.get('payment-response'));
    expect(h.txCount()).to.equal(before + 1);
    expect(policiesOf(p)).to.have.length(1);
  });

  it('lets a payer with a matching active policy in without a new one', async () => {
    const before = h.txCount();
    const r = await get({ payment: await pay(payer, deferred) });
    expect(r.status).to.equal(200);
    const pr = parseKeyValueHeader(r.headers.get('payment-response')!);
    expect(pr['policy']).to.equal(policy);
    expect(pr['transaction']).to.equal(undefined);
    expect(r.body.message).to.contain('no new policy');
    expect(h.txCount()).to.equal(before);
    expect(policiesOf(payer)).to.have.length(1);
  });

  it('refuses a forged JWT with 402 and the requirements', async () => {
    const [head, body, sig] = jwt.split('.');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...claims, sub: h.payer().publicKey.toBase58() })).toString('base64url')}.${sig}`;
    const r = await get({ authorization: `Bearer ${forged}` });
    expect(r.status).to.equal(402);
    expect(r.body.error).to.contain('not valid');
    expect(r.body.accepts).to.have.length(2);
    expect(r.headers.get('payment-required')).to.contain('scheme=deferred');
  });

  it('serves the bearer of a subscription paused on chain through the period it paid (within X402_CACHE_MS)', async () => {
    const { blockhash } = h.ln.chain.latestBlockhash();
    const up = pdas.userPayment(payer.publicKey, MINT);
    const acc = await readProgramAccount(h.rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    const policyId = acc.kind === 'found' ? Number(acc.data['policy_id']) : 0;
    const ix = tributaryIx('change_payment_policy_status', {
      owner: payer.publicKey, user_payment: up, token_mint: MINT,
      payment_policy: new PublicKey(policy), config: pdas.config(),
    }, { policy_id: policyId, new_status: { Paused: {} } });
    const tx = signedTransaction(payer, [], [ix], blockhash);
    await h.rpc.call('sendTransaction', [Buffer.from(tx.serialize()).toString('base64'), { encoding: 'base64' }]);
    await new Promise((r) => setTimeout(r, 300));
    const r = await get({ authorization: `Bearer ${jwt}` });
    expect(r.status, 'paid through next month: the pause stops the next charge, not what was paid for').to.equal(200);
  });

  it('refuses an expired JWT', async () => {
    const p = h.payer();
    const paid = await get({ payment: await pay(p, deferred) });
    expect(paid.status).to.equal(200);
    expect((await get({ authorization: `Bearer ${paid.body.jwt}` })).status).to.equal(200);
    offsetMs = 3601_000;
    try {
      const r = await get({ authorization: `Bearer ${paid.body.jwt}` });
      expect(r.status).to.equal(402);
      expect(r.body.error).to.contain('expired');
    } finally {
      offsetMs = 0;
    }
  });
});
