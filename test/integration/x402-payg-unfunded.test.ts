/**
 * Pay-as-you-go is served first and charged later, through the delegation the Payment
 * transaction approved. A payer who revokes that delegation, or empties its token account,
 * right after paying, or who simply keeps less in it than it uses, was still admitted every
 * period up to the cap while the charges of the usage were refused (NoDelegateSet,
 * InsufficientBalance): service for nothing, period after period. The bearer path now admits
 * a chunk only while the usage not charged yet fits in what the account can fund, refuses
 * (402, in the program's words) a policy the chain would not let the settler charge, and a new
 * Payment transaction (whose approve restores the delegation) is sent rather than answered
 * with the unfunded policy.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Keypair, PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { associatedTokenAddress, revokeIx, transferIx } from '../../src/kernel/domain/spl-token.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';
import { call, gatewayJwt } from './x402-facilitator-support.js';

describe('x402 pay-as-you-go: a payer that stops funding its policy stops being served', function () {
  this.timeout(90_000);
  let h: X402Harness;

  before(async () => {
    h = await startX402('payg-unfunded', {
      X402_DEMO_PAYG_PRICE: '10000', X402_DEMO_PAYG_MAX_CHUNK: '10000', X402_DEMO_PAYG_MAX_PER_PERIOD: '1000000',
      X402_DEMO_PAYG_PERIOD_SECONDS: '3600', X402_CACHE_MS: '200',
    });
  });
  after(async () => { await h?.close(); });

  const bearer = async (jwt: string) => {
    const res = await fetch(`${h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${jwt}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const pay = async (payer: Keypair) => {
    const r = await payAndFetch(`${h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: h.ln.rpcUrl, scheme: 'x402://payg' });
    expect(r.response.status).to.equal(200);
    return { jwt: r.paid!.jwt, policy: r.paid!.policy!, mint: new PublicKey(r.paid!.requirement.tokenMint).toBase58(), message: r.paid };
  };
  const send = async (payer: Keypair, ix: TransactionInstruction) => {
    const { value } = await h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash }).add(ix);
    tx.sign(payer);
    await h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
  };
  const settle = () => new Promise((r) => setTimeout(r, 400)); // past X402_CACHE_MS

  it('revoked delegation: 402 naming NoDelegateSet; paying again sends the new approve and serves again', async () => {
    const payer = h.payer();
    const first = await pay(payer);
    expect((await bearer(first.jwt)).status).to.equal(200);

    await send(payer, revokeIx(associatedTokenAddress(payer.publicKey.toBase58(), first.mint), payer.publicKey.toBase58()));
    await settle();
    for (let i = 0; i < 3; i += 1) {
      const refused = await bearer(first.jwt);
      expect(refused.status, JSON.stringify(refused.body)).to.equal(402);
      expect(refused.body.error).to.match(/NoDelegateSet \(6008\)/);
    }
    const rows = await h.env.db.selectFrom('payg_usage').select('request_id').where('policy', '=', first.policy).execute();
    expect(rows, 'nothing metered while unfunded').to.have.length(2);

    const txs = h.txCount();
    const again = await pay(payer);
    expect(h.txCount(), 'the new Payment transaction (with its approve) was sent').to.be.greaterThan(txs);
    expect(again.policy).to.not.equal(first.policy);
    expect((await bearer(again.jwt)).status).to.equal(200);
    await settle();
    expect((await bearer(first.jwt)).status, 'the approve funds the earlier policy too').to.equal(200);
  });

  it('a payer keeping one request\'s worth in its account is served only what the account can fund, not up to the cap', async () => {
    const payer = h.payer();
    const { jwt, mint } = await pay(payer); // its own request: 10,000 used, nothing charged yet
    const source = associatedTokenAddress(payer.publicKey.toBase58(), mint);
    const balance = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [source]);
    const sink = associatedTokenAddress(h.payer().publicKey.toBase58(), mint);
    await send(payer, transferIx(source, sink, payer.publicKey.toBase58(), BigInt(balance.value.amount) - 25_000n));
    await settle();
    expect((await bearer(jwt)).status, '20,000 used of 25,000 held').to.equal(200);
    for (let i = 0; i < 3; i += 1) {
      const refused = await bearer(jwt);
      expect(refused.status, JSON.stringify(refused.body)).to.equal(402);
      expect(refused.body.error).to.match(/funds 25000 more, this request costs 10000 on top of 20000 used and not charged yet \(InsufficientBalance \(6007\)\)/);
    }
  });

  it('a free request (amount 0) is admitted without a ledger row the settler could never charge; a negative one is refused', async () => {
    const payer = h.payer();
    const paid = await payAndFetch(`${h.api.url}${DEMO_PATH}`, { wallet: payer, rpcUrl: h.ln.rpcUrl, scheme: 'x402://payg' });
    const policy = paid.paid!.policy!;
    const gw = h.ln.fixtures.gateways[0]!;
    const auth = { authorization: `Bearer ${await gatewayJwt(h, paid.paid!.requirement.gateway, gw.authority)}` };
    const usage = (amount: number | string) => call(h.api.url, 'POST', '/v1/x402/usage', { jwt: paid.paid!.jwt, paymentRequirements: paid.paid!.requirement, amount }, auth);
    const free = await usage(0);
    expect(free.status, JSON.stringify(free.body)).to.equal(200);
    expect(free.body).to.deep.include({ admitted: true });
    expect(free.body.metered).to.include({ chunk: '0', periodTotal: '10000' });
    const rows = await h.env.db.selectFrom('payg_usage').select('chunk').where('policy', '=', policy).execute();
    expect(rows.map((r) => r.chunk), 'only the paid request in the ledger').to.deep.equal(['10000']);
    expect((await usage('-1')).status).to.equal(400);
  });

  it('an emptied token account: 402 naming InsufficientBalance', async () => {
    const payer = h.payer();
    const { jwt, mint } = await pay(payer);
    const source = associatedTokenAddress(payer.publicKey.toBase58(), mint);
    const balance = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [source]);
    const sink = associatedTokenAddress(h.payer().publicKey.toBase58(), mint); // another funded wallet's account
    await send(payer, transferIx(source, sink, payer.publicKey.toBase58(), BigInt(balance.value.amount)));
    await settle();
    const refused = await bearer(jwt);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(402);
    expect(refused.body.error).to.match(/InsufficientBalance \(6007\)/);
  });
});
