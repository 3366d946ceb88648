/**
 * Issue 15, finding 1: a landed transaction is public, so presenting it proves nothing.
 * Against a localnet started here and an API node on real HTTP: a payer pays; an attacker
 * fetches the landed transaction back with getTransaction and submits it as a Payment
 * header (alone, with the original header's other fields, with a proof of its own) and
 * gets 402 and no JWT. The payer's own repeat with its proof gets the same answer as
 * before (idempotent). A proof that is another wallet's, older than 300 s, or for another
 * requirement is refused; so is the transaction-less form for someone else's policy.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { decodePaymentHeader, encodePaymentHeader, type PaymentPayload } from '../../commands/x402/payload.js';
import { signPaymentProof, type PaymentProof } from '../../commands/x402/proof.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { DEMO_PATH, startX402, type X402Harness } from '../integration/x402-harness.js';

describe('x402 replay: only the payer gets the payer\'s JWT (localnet, real HTTP)', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let url: string;
  let deferred: AcceptedRequirement;
  let payg: AcceptedRequirement;
  let payer: Keypair;
  let original: PaymentPayload;
  let paidBody: any;
  let txSignature = '';
  let landedTx = '';
  const now = () => Math.floor(Date.now() / 1000);

  const send = async (payment: string) => {
    const res = await fetch(url, { headers: { payment } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const header = (p: PaymentPayload) => encodePaymentHeader({ scheme: p.scheme, network: p.network, id: p.id, payload: p.payload });
  const proofBy = (k: Keypair, r: AcceptedRequirement, tx: string | undefined, signedAt = now()): PaymentProof =>
    signPaymentProof(k.secretKey, { requirementId: r.id, resource: r.resource, transactionSignature: tx }, signedAt);
  const expectRefused = async (payment: string, reason: RegExp) => {
    const before = h.txCount();
    const r = await send(payment);
    expect(r.status, JSON.stringify(r.body)).to.equal(402);
    expect(r.body).to.not.have.property('jwt');
    expect(r.body.error).to.match(reason);
    expect(h.txCount()).to.equal(before);
  };

  before(async () => {
    h = await startX402('replay');
    url = `${h.api.url}${DEMO_PATH}`;
    [deferred, payg] = (await h.accepts()) as [AcceptedRequirement, AcceptedRequirement];
    payer = h.payer();
    const built = await buildPayment(deferred, { wallet: payer, rpc: h.rpc });
    const d = decodePaymentHeader(built.header);
    if (!d.ok) throw new Error(d.reason);
    original = d.payment;
    const paid = await send(built.header);
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    paidBody = paid.body;
    txSignature = built.signature;
    // what anyone can read: the landed transaction, from the chain
    const got = await h.rpc.call<{ transaction: [string, string] }>('getTransaction', [txSignature, { encoding: 'base64', commitment: 'confirmed' }]);
    landedTx = got.transaction[0];
  });
  after(async () => { await h.close(); });

  it('refuses the landed transaction submitted by someone else without a proof, naming the missing proof', async () => {
    await expectRefused(header({ ...original, payload: { serializedTransaction: landedTx } }), /carries no proof/);
  });

  it('refuses it with the original header\'s other fields (scheme, network, id) and no proof', async () => {
    await expectRefused(header({ x402Version: 2, scheme: deferred.scheme, network: deferred.network, id: deferred.id, payload: { serializedTransaction: landedTx } }), /no proof/);
  });

  it('refuses a proof signed by another wallet', async () => {
    const attacker = Keypair.generate();
    await expectRefused(header({ ...original, payload: { serializedTransaction: landedTx, proof: proofBy(attacker, deferred, txSignature) } }), /not the payer's/);
  });

  it('refuses the payer\'s proof older than 300 s', async () => {
    await expectRefused(header({ ...original, payload: { serializedTransaction: landedTx, proof: proofBy(payer, deferred, txSignature, now() - 301) } }), /more than 300 s/);
  });

  it('refuses the payer\'s proof for another requirement', async () => {
    await expectRefused(header({ ...original, payload: { serializedTransaction: landedTx, proof: proofBy(payer, payg, txSignature) } }), /not the payer's/);
  });

  it('refuses the payer\'s proof of another transaction', async () => {
    await expectRefused(header({ ...original, payload: { serializedTransaction: landedTx, proof: proofBy(payer, deferred, undefined) } }), /not the payer's/);
  });

  it('gives the payer\'s own repeat, with a fresh proof, the same answer (idempotent)', async () => {
    const before = h.txCount();
    const again = await send(header({ ...original, payload: { serializedTransaction: landedTx, proof: proofBy(payer, deferred, txSignature) } }));
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body).to.deep.equal(paidBody);
    expect(h.txCount()).to.equal(before);
  });

  it('serves a payer who holds the policy without a transaction, and refuses that form for anyone else', async () => {
    const mine = await send(header({ ...original, payload: { payer: payer.publicKey.toBase58(), proof: proofBy(payer, deferred, undefined) } }));
    expect(mine.status, JSON.stringify(mine.body)).to.equal(200);
    expect(mine.body.message).to.contain('no new policy');
    const attacker = Keypair.generate();
    await expectRefused(header({ ...original, payload: { payer: payer.publicKey.toBase58(), proof: proofBy(attacker, deferred, undefined) } }), /not the payer's/);
    await expectRefused(header({ ...original, payload: { payer: payer.publicKey.toBase58() } }), /carries no proof/);
    const stranger = h.payer();
    await expectRefused(header({ ...original, payload: { payer: stranger.publicKey.toBase58(), proof: proofBy(stranger, deferred, undefined) } }), /holds no active payment policy/);
  });
});
