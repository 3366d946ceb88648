/**
 * Issue 15, finding 1: a landed transaction is public, so presenting it proves nothing.
 * Against a localnet started here and an API node on real HTTP: a payer pays; an attacker
 * fetches the landed transaction back with getTransaction and submits it as a Payment
 * header (alone, with the original header's other fields, with a proof of its own) and
 * gets 402 and no JWT. The payer's own repeat with its proof gets the same answer as
 * before (idempotent). A proof that is another wallet's, older than 300 s, or for another
 * requirement is refused; so is the transaction-less form for someone else's policy.
 * A proof is answered once: the same header presented again (a copy from a proxy's log),
 * in either form, gets no JWT, and of two concurrent presentations one is answered.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { decodePaymentHeader, encodePaymentHeader, type PaymentPayload } from '../../commands/x402/payload.js';
import { freshSignedAt, signPaymentProof, type PaymentProof } from '../../commands/x402/proof.js';
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
  let paidHeader = '';
  let paidPolicy = '';
  const now = () => Math.floor(Date.now() / 1000);

  const send = async (payment: string) => {
    const res = await fetch(url, { headers: { payment } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const header = (p: PaymentPayload) => encodePaymentHeader({ scheme: p.scheme, network: p.network, id: p.id, payload: p.payload });
  // a payer's own client never signs one proof twice (proof.ts, freshSignedAt)
  const proofBy = (k: Keypair, r: AcceptedRequirement, tx: string | undefined, signedAt = freshSignedAt(k.publicKey.toBase58(), now())): PaymentProof =>
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
    paidHeader = built.header;
    paidPolicy = built.policyAddress;
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

  it('answers the same header (a transaction) once: sent again, no JWT, a 402 naming the used proof and the settled payment', async () => {
    await expectRefused(paidHeader, /payment proof \(signed at \d+\) was used already/);
    const again = await send(paidHeader);
    expect(again.body.error).to.contain(`transaction ${txSignature}`).and.contain(`policy ${paidPolicy}`).and.match(/fresh proof/);
  });

  it('answers a {payer, proof} header once: sent again, refused, to sign a fresh proof; a fresh one is answered', async () => {
    const existing = header({ ...original, payload: { payer: payer.publicKey.toBase58(), proof: proofBy(payer, deferred, undefined) } });
    const first = await send(existing);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    await expectRefused(existing, /was used already.*sign(s)? a fresh proof/);
    const fresh = await send(header({ ...original, payload: { payer: payer.publicKey.toBase58(), proof: proofBy(payer, deferred, undefined) } }));
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
    expect(fresh.body.jwt).to.be.a('string');
  });

  it('answers one of two concurrent presentations of one proof, in either form', async () => {
    const existing = header({ ...original, payload: { payer: payer.publicKey.toBase58(), proof: proofBy(payer, deferred, undefined) } });
    const held = await Promise.all([send(existing), send(existing)]);
    expect(held.map((r) => r.status).sort(), JSON.stringify(held.map((r) => r.body))).to.deep.equal([200, 402]);
    expect(held.find((r) => r.status === 402)?.body.error).to.match(/was used already/);
    const other = h.payer();
    const built = await buildPayment(payg, { wallet: other, rpc: h.rpc });
    const before = h.txCount();
    const paid = await Promise.all([send(built.header), send(built.header)]);
    expect(paid.map((r) => r.status).sort(), JSON.stringify(paid.map((r) => r.body))).to.deep.equal([200, 402]);
    expect(paid.filter((r) => typeof r.body.jwt === 'string')).to.have.length(1);
    expect(h.txCount(), 'one transaction sent').to.equal(before + 1);
  });

  it('keeps a spent proof in Postgres for twice the proof window, and drops the rows past their time at the next spend', async () => {
    const db = h.env.db;
    await sql`INSERT INTO x402_spent_proofs (payer, signature, expires_at) VALUES ('old-payer', 'old-signature', now() - interval '1 second')`.execute(db);
    const proof = proofBy(payer, deferred, undefined);
    const r = await send(header({ ...original, payload: { payer: payer.publicKey.toBase58(), proof } }));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const kept = await sql<{ s: number }>`
      SELECT extract(epoch FROM expires_at - now())::int AS s FROM x402_spent_proofs WHERE payer = ${payer.publicKey.toBase58()} AND signature = ${proof.signature}`.execute(db);
    expect(kept.rows[0]?.s).to.be.within(590, 600);
    const left = await sql<{ n: string }>`SELECT count(*) AS n FROM x402_spent_proofs WHERE expires_at < now()`.execute(db);
    expect(left.rows[0]!.n).to.equal('0');
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
