/**
 * A Payment transaction that is not what the requirement asks is refused with 402 and
 * its reason, before any call to the chain: the API reaches the localnet through a
 * recording proxy, and not one JSON-RPC call (sendTransaction least of all) goes out, and
 * the chain lands nothing.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Keypair, SystemProgram, TransactionMessage, VersionedTransaction, type Keypair as Kp } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { decodePaymentHeader, encodePaymentHeader } from '../../commands/x402/payload.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { signMessage } from '../../infra/localnet/signatures.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';

type Tx = VersionedTransaction;

describe('x402: tampered payments are refused before the chain hears of them', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let url: string;
  let deferred: AcceptedRequirement;
  let payg: AcceptedRequirement;
  let payer: Kp;

  before(async () => {
    h = await startX402('tamper');
    url = `${h.api.url}${DEMO_PATH}`;
    [deferred, payg] = (await h.accepts()) as [AcceptedRequirement, AcceptedRequirement];
    payer = h.payer();
  });
  after(async () => { await h.close(); });

  /** A payment built for `terms`, presented as paying `paying` (the requirement the server compares with). */
  const header = async (terms: AcceptedRequirement, paying: AcceptedRequirement = terms) => {
    const d = decodePaymentHeader((await buildPayment(terms, { wallet: payer, rpc: h.rpc })).header);
    if (!d.ok) throw new Error(d.reason);
    return encodePaymentHeader({ ...d.payment, id: paying.id, scheme: paying.scheme, network: paying.network });
  };
  /** The same header with its transaction changed after signing. */
  const rewrap = (value: string, change: (tx: Tx) => void): string => {
    const d = decodePaymentHeader(value);
    if (!d.ok) throw new Error(d.reason);
    if (!('serializedTransaction' in d.payment.payload)) throw new Error('no transaction');
    const tx = VersionedTransaction.deserialize(Buffer.from(d.payment.payload.serializedTransaction, 'base64'));
    change(tx);
    return encodePaymentHeader({ ...d.payment, payload: { serializedTransaction: Buffer.from(tx.serialize()).toString('base64') } });
  };

  const expectRefused = async (payment: string, reason: RegExp) => {
    const calls = h.rpcCalls().length;
    const landed = h.txCount();
    const res = await fetch(url, { headers: { payment } });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(402);
    expect(body.error).to.match(reason);
    expect(body.accepts).to.have.length(2);
    expect(res.headers.get('payment-required')).to.contain(`id=${deferred.id}`);
    expect(h.rpcCalls().slice(calls), 'JSON-RPC calls made by the API').to.deep.equal([]);
    expect(h.txCount()).to.equal(landed);
  };

  it('another recipient', async () => {
    await expectRefused(await header({ ...deferred, recipient: Keypair.generate().publicKey.toBase58() }, deferred), /the recipient is \w+; the requirement asks/);
  });

  it('a lower amount', async () => {
    await expectRefused(await header({ ...deferred, amount: 999_999 }, deferred), /subscription amount is 999999; the requirement asks 1000000/);
  });

  it('the wrong mint', async () => {
    await expectRefused(await header({ ...deferred, tokenMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' }, deferred), /token mint is EPjF\w+; the requirement asks 4zMM/);
  });

  it('another gateway', async () => {
    await expectRefused(await header({ ...deferred, gateway: h.ln.fixtures.gateways[1]!.address }, deferred), /the gateway is \w+; the requirement asks/);
  });

  it('another frequency, and a looser pay-as-you-go cap', async () => {
    await expectRefused(await header({ ...deferred, paymentFrequency: 'Daily' }, deferred), /payment frequency is Daily/);
    await expectRefused(await header({ ...payg, maxAmountPerPeriod: 10_000_000 }, payg), /max_amount_per_period is 10000000/);
  });

  it('a subscription where a pay-as-you-go policy is asked', async () => {
    await expectRefused(await header(deferred, payg), /is Subscription; scheme x402:\/\/payg needs a PayAsYouGo/);
  });

  it('a missing signature', async () => {
    await expectRefused(rewrap(await header(deferred), (tx) => { tx.signatures[0] = new Uint8Array(64); }), /signature of \w+ is missing/);
  });

  it('a bad signature, and a transaction changed after signing', async () => {
    await expectRefused(rewrap(await header(deferred), (tx) => { const s = tx.signatures[0]!; s[5] = (s[5] ?? 0) ^ 0xff; }), /signature of \w+ does not verify/);
    const other = Keypair.generate();
    await expectRefused(rewrap(await header(deferred), (tx) => { tx.signatures[0] = signMessage(tx.message.serialize(), other.secretKey); }), /signature of \w+ does not verify/);
    await expectRefused(rewrap(await header(deferred), (tx) => { (tx.message as any).recentBlockhash = Keypair.generate().publicKey.toBase58(); }), /does not verify/);
  });

  it('an instruction of another program riding along', async () => {
    const built = await buildPayment(deferred, { wallet: payer, rpc: h.rpc });
    const ixs = TransactionMessage.decompile(built.transaction.message).instructions;
    ixs.push(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
    const msg = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: built.transaction.message.recentBlockhash, instructions: ixs }).compileToLegacyMessage();
    const tx = new VersionedTransaction(msg);
    tx.sign([payer]);
    const d = decodePaymentHeader(built.header);
    if (!d.ok) throw new Error(d.reason);
    await expectRefused(encodePaymentHeader({ ...d.payment, payload: { serializedTransaction: Buffer.from(tx.serialize()).toString('base64') } }), /calls 11111111111111111111111111111111/);
  });

  it('a header that is not a payment payload, or names an unknown requirement', async () => {
    await expectRefused('not base64!', /not Base64/);
    await expectRefused(Buffer.from('{"x402Version":1}').toString('base64'), /x402Version must be 2/);
    const d = decodePaymentHeader(await header(deferred));
    if (!d.ok) throw new Error(d.reason);
    await expectRefused(encodePaymentHeader({ ...d.payment, id: 'f'.repeat(32) }), /does not accept/);
  });

  it('still accepts the honest payment afterwards', async () => {
    const res = await fetch(url, { headers: { payment: await header(deferred) } });
    expect(res.status).to.equal(200);
    expect(h.rpcCalls()).to.include('sendTransaction');
  });
});
