/**
 * The verifier accepts the Payment transaction only in the shape the SDK builds: an SPL
 * approve of the program's delegate for at least the policy's allowance, and for
 * `deferred` the first execute_payment by the payer. Transactions re-signed by the payer
 * without the approve, with another delegate, with too small an amount, without the
 * execution or with a transfer riding along are refused with 402 and a clear reason
 * before any call to the chain.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Keypair, PublicKey, TransactionInstruction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { decodePaymentHeader, encodePaymentHeader } from '../../commands/x402/payload.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { approveIx, associatedTokenAddress, decodeTokenIx, TOKEN_PROGRAM, transferIx } from '../../src/kernel/domain/spl-token.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';

describe('x402: the Payment transaction carries the approve and the first execution', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let url: string;
  let deferred: AcceptedRequirement;
  let payg: AcceptedRequirement;
  let payer: Keypair;

  before(async () => {
    h = await startX402('approve');
    url = `${h.api.url}${DEMO_PATH}`;
    [deferred, payg] = (await h.accepts()) as [AcceptedRequirement, AcceptedRequirement];
    payer = h.payer();
  });
  after(async () => { await h.close(); });

  /** The payment for `r`, its instructions changed by `edit`, compiled and signed again by the payer. */
  const edited = async (r: AcceptedRequirement, edit: (ixs: TransactionInstruction[]) => TransactionInstruction[]): Promise<string> => {
    const built = await buildPayment(r, { wallet: payer, rpc: h.rpc });
    const d = decodePaymentHeader(built.header);
    if (!d.ok) throw new Error(d.reason);
    const msg = TransactionMessage.decompile(built.transaction.message);
    const next = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: msg.recentBlockhash, instructions: edit(msg.instructions) }).compileToLegacyMessage();
    const tx = new VersionedTransaction(next);
    tx.sign([payer]);
    return encodePaymentHeader({ ...d.payment, payload: { serializedTransaction: Buffer.from(tx.serialize()).toString('base64') } });
  };
  const isApprove = (ix: TransactionInstruction): boolean =>
    ix.programId.toBase58() === TOKEN_PROGRAM && decodeTokenIx(ix.data, ix.keys.map((k) => k.pubkey.toBase58())).kind === 'approve';
  const replaceApprove = (delegate: (d: string) => string, amount: (a: bigint) => bigint) => (ixs: TransactionInstruction[]) => ixs.map((ix) => {
    if (!isApprove(ix)) return ix;
    const d = decodeTokenIx(ix.data, ix.keys.map((k) => k.pubkey.toBase58()));
    if (d.kind !== 'approve') return ix;
    return approveIx(d.source, delegate(d.delegate), d.owner, amount(d.amount));
  });

  const expectRefused = async (payment: string, reason: RegExp) => {
    const calls = h.rpcCalls().length;
    const landed = h.txCount();
    const res = await fetch(url, { headers: { payment } });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(402);
    expect(body.error).to.match(reason);
    expect(h.rpcCalls().slice(calls), 'JSON-RPC calls made by the API').to.deep.equal([]);
    expect(h.txCount()).to.equal(landed);
  };

  it('refuses a transaction without the approve', async () => {
    await expectRefused(await edited(deferred, (ixs) => ixs.filter((ix) => !isApprove(ix))), /has no SPL approve of the program's delegate/);
    await expectRefused(await edited(payg, (ixs) => ixs.filter((ix) => !isApprove(ix))), /has no SPL approve/);
  });

  it('refuses an approve to another delegate', async () => {
    const stranger = Keypair.generate().publicKey.toBase58();
    await expectRefused(await edited(deferred, replaceApprove(() => stranger, (a) => a)), new RegExp(`the approve's delegate is ${stranger}; the program accepts the user payment account`));
  });

  it('refuses an approve below the policy\'s yearly allowance', async () => {
    // the demo: 1,000,000 Monthly → 12,000,000 a year; pay-as-you-go 1,000,000 per day → 365,000,000
    await expectRefused(await edited(deferred, replaceApprove((d) => d, () => 11_999_999n)), /the approve's amount 11999999 is below 12000000/);
    await expectRefused(await edited(payg, replaceApprove((d) => d, () => 1_000_000n)), /the approve's amount 1000000 is below \d+/);
  });

  it('refuses a deferred payment without its first execution', async () => {
    const tributary = h.ln.fixtures.programId;
    const lastTributary = (ixs: TransactionInstruction[]) => ixs.filter((ix, i) => !(ix.programId.toBase58() === tributary && i === ixs.length - 1));
    await expectRefused(await edited(deferred, lastTributary), /execute_payment by the payer is missing/);
  });

  it('refuses an execution with other accounts, and a pay-as-you-go payment that executes one', async () => {
    const programId = h.ln.fixtures.programId;
    const isExecute = (ix: TransactionInstruction): boolean => ix.programId.toBase58() === programId && ix.keys.length >= 12 && ix.keys[0]!.isSigner && ix.keys[11]!.pubkey.toBase58() === TOKEN_PROGRAM;
    const stranger = associatedTokenAddress(Keypair.generate().publicKey.toBase58(), deferred.tokenMint);
    const redirected = (ixs: TransactionInstruction[]) => ixs.map((ix) => {
      if (!isExecute(ix)) return ix;
      const keys = ix.keys.map((k, i) => (i === 8 ? { ...k, pubkey: new PublicKey(stranger) } : k));
      return new TransactionInstruction({ programId: ix.programId, keys, data: ix.data });
    });
    await expectRefused(await edited(deferred, redirected), new RegExp(`execute_payment's recipient_token_account is ${stranger}; it must be`));
    const extra = (ixs: TransactionInstruction[]) => ixs.map((ix) => (isExecute(ix)
      ? new TransactionInstruction({ programId: ix.programId, keys: [...ix.keys, { pubkey: new PublicKey(stranger), isSigner: false, isWritable: true }], data: ix.data })
      : ix));
    await expectRefused(await edited(deferred, extra), /only remaining account may be the payer's own token account/);

    const d = await buildPayment(deferred, { wallet: payer, rpc: h.rpc });
    const execute = TransactionMessage.decompile(d.transaction.message).instructions.find(isExecute)!;
    await expectRefused(await edited(payg, (ixs) => [...ixs, execute]), /a pay-as-you-go payment is charged per request; its Payment transaction executes no payment/);
  });

  it('refuses a token transfer riding along', async () => {
    const source = associatedTokenAddress(payer.publicKey.toBase58(), deferred.tokenMint);
    const thief = associatedTokenAddress(Keypair.generate().publicKey.toBase58(), deferred.tokenMint);
    await expectRefused(await edited(deferred, (ixs) => [...ixs, transferIx(source, thief, payer.publicKey.toBase58(), 1n)]), /token program instruction \(tag 3\) other than approve or revoke/);
  });

  it('accepts the honest payment: the approve to the user payment PDA, the first period paid', async () => {
    const built = await buildPayment(deferred, { wallet: payer, rpc: h.rpc });
    const res = await fetch(url, { headers: { payment: built.header } });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(built.approvedAmount).to.equal(12_000_000n);
    const policy = h.ln.ledger().filter((e) => e.name === 'PaymentRecord' && e.data['payment_policy'] === built.policyAddress);
    expect(policy).to.have.length(1);
  });
});
