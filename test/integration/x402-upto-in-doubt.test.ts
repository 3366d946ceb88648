/**
 * An x402://upto settlement whose confirmation timed out (503) is in doubt: its transaction
 * may land later, or never. Its retry is resolved from the chain: landed → the stored
 * result (the service answered "Completed" and the merchant never learned it was paid);
 * still able to land → another transaction waits (503, Retry-After) instead of racing it;
 * proven never to land (blockhash expired, no status, the policy's payment_count unchanged)
 * → the marker is cleared and a new transaction settles. A settlement nobody asks about
 * again is resolved the same way by the settler's pass (resolveUptoInDoubt).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { rpcError, rpcResult, rpcStandIn, type RpcStandIn } from '../support/rpc-stand-in.js';
import { expect } from 'chai';
import { Keypair, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { buildUptoSettlement } from '../../commands/x402/upto.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, payloadOf, registerUpto } from './x402-facilitator-support.js';
import { resolveUptoInDoubt } from '../../commands/x402/upto-marker.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

/**
 * The localnet's RPC as a node that loses answers: a sendTransaction of bytes in `held` is answered
 * (a made-up signature) and never sent; one in `behind` is sent and answered -32005 (node behind);
 * isBlockhashValid of a hash in `expired` says no.
 */
async function lossyNode(): Promise<RpcStandIn & { held: Set<string>; behind: Set<string>; expired: Set<string> }> {
  const [held, behind, expired] = [new Set<string>(), new Set<string>(), new Set<string>()];
  const node = await rpcStandIn(async (asked, forward) => {
    if (Array.isArray(asked)) return forward();
    const first = String(asked.params?.[0]);
    if (asked.method === 'sendTransaction' && held.has(first)) return rpcResult(asked, 'held');
    if (asked.method === 'isBlockhashValid' && expired.has(first)) return rpcResult(asked, { context: { slot: 0 }, value: false });
    const text = await forward();
    if (asked.method === 'sendTransaction' && behind.has(first)) return rpcError(asked, { code: -32005, message: 'Node is behind by 42 slots', data: { numSlotsBehind: 42 } });
    return text;
  });
  return { ...node, held, behind, expired };
}

describe('x402://upto: a settlement whose confirmation timed out', function () {
  this.timeout(90_000);
  let h: X402Harness;
  let node: Awaited<ReturnType<typeof lossyNode>>;
  let key = '';
  let upto: AcceptedRequirement;
  let merchant: Keypair;
  const post = (body: unknown) => fetch(`${h.api.url}/v1/x402/usage`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body),
  });
  const balance = async (owner: string): Promise<bigint> => {
    const r = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(owner, USDC_DEV)]);
    return BigInt(r.value.amount);
  };
  const authorize = async (payer: Keypair) => {
    const r = await call(h.api.url, 'POST', '/v1/x402/settle', { paymentPayload: payloadOf((await buildPayment(upto, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: upto }, { 'x-api-key': key });
    expect(r.body.success, JSON.stringify(r.body)).to.equal(true);
    return r.body as { jwt: string; policy: string };
  };
  const build = (policy: string, amount: bigint) => buildUptoSettlement({ rpc: h.rpc, programId: PROGRAM_ID, policy, amount, signer: merchant });
  const usage = (jwt: string, amount: bigint, transaction: string) => post({ jwt, paymentRequirements: upto, amount: amount.toString(), transaction });

  before(async () => {
    node = await lossyNode();
    h = await startX402('upto-in-doubt', { SOLANA_RPC_URL: node.url, X402_CONFIRM_TIMEOUT_MS: '1500' });
    node.target.url = h.ln.rpcUrl;
    const gw = h.ln.fixtures.gateways[0]!;
    merchant = Keypair.fromSecretKey(bs58.decode(gw.authoritySecretKey));
    ({ key, upto } = await registerUpto(h, gw, 500000n, { description: 'charged by tokens used' }));
  });
  after(async () => {
    await h?.close();
    await node?.close();
  });

  it('landed after the 503: the retry gets the stored result, and the payer paid once', async () => {
    const payer = h.payer();
    const a = await authorize(payer);
    const before = await balance(payer.publicKey.toBase58());
    const tx = await build(a.policy, 120_000n);
    node.held.add(tx.serializedTransaction);
    const lost = await usage(a.jwt, 120_000n, tx.serializedTransaction);
    expect(lost.status, 'the confirmation timed out').to.equal(503);
    // the node did get it to a leader after all
    await h.rpc.call('sendTransaction', [tx.serializedTransaction, { encoding: 'base64' }]);

    const retry = await usage(a.jwt, 120_000n, tx.serializedTransaction);
    const body = await retry.json() as any;
    expect(retry.status, JSON.stringify(body)).to.equal(200);
    expect(body, JSON.stringify(body)).to.deep.include({ admitted: true, policy: a.policy, settled: { amount: '120000', transaction: tx.signature } });
    const other = await usage(a.jwt, 1n, (await build(a.policy, 1n)).serializedTransaction);
    expect(((await other.json()) as any).admitted).to.equal(false);
    expect(await balance(payer.publicKey.toBase58())).to.equal(before - 120_000n);
  });

  it('still able to land: another transaction waits (503, Retry-After); proven never to land: a new one settles', async () => {
    const payer = h.payer();
    const a = await authorize(payer);
    const before = await balance(payer.publicKey.toBase58());
    const first = await build(a.policy, 100_000n);
    node.held.add(first.serializedTransaction);
    expect((await usage(a.jwt, 100_000n, first.serializedTransaction)).status).to.equal(503);

    const second = await build(a.policy, 50_000n);
    const waiting = await usage(a.jwt, 50_000n, second.serializedTransaction);
    expect(waiting.status, JSON.stringify(await waiting.clone().json())).to.equal(503);
    expect(waiting.headers.get('retry-after')).to.match(/^\d+$/);
    expect(await balance(payer.publicKey.toBase58()), 'nothing charged while in doubt').to.equal(before);

    // the first transaction's blockhash expires: it can never land
    node.expired.add(VersionedTransaction.deserialize(Buffer.from(first.serializedTransaction, 'base64')).message.recentBlockhash);
    const settled = await usage(a.jwt, 50_000n, second.serializedTransaction);
    const body = await settled.json() as any;
    expect(settled.status, JSON.stringify(body)).to.equal(200);
    expect(body.settled).to.deep.equal({ amount: '50000', transaction: second.signature });
    expect(await balance(payer.publicKey.toBase58())).to.equal(before - 50_000n);
  });

  it('in doubt and never asked about again: the settler\'s pass records the landed one and clears the one that can never land', async () => {
    const prefix = h.api.ctx.config.redis.prefix;
    const marker = async (policy: string) => JSON.parse((await h.env.redis.get(`${prefix}x402:upto:${policy}`)) ?? 'null') as { state: string; transaction: string } | null;
    const landed = await authorize(h.payer());
    const landedTx = await build(landed.policy, 70_000n);
    node.held.add(landedTx.serializedTransaction);
    expect((await usage(landed.jwt, 70_000n, landedTx.serializedTransaction)).status).to.equal(503);
    await h.rpc.call('sendTransaction', [landedTx.serializedTransaction, { encoding: 'base64' }]);
    const dead = await authorize(h.payer());
    const deadTx = await build(dead.policy, 30_000n);
    node.held.add(deadTx.serializedTransaction);
    expect((await usage(dead.jwt, 30_000n, deadTx.serializedTransaction)).status).to.equal(503);
    node.expired.add(VersionedTransaction.deserialize(Buffer.from(deadTx.serializedTransaction, 'base64')).message.recentBlockhash);
    expect((await marker(landed.policy))?.state, 'left sending by the lost answer').to.equal('sending');

    // the service's node, which calls the dead one's blockhash expired
    const deps = { redis: h.env.redis, redisPrefix: prefix, io: { rpc: createRpcClient({ url: node.url, timeoutMs: 5000 }), commitment: 'confirmed' as const }, programId: PROGRAM_ID };
    // not yet old enough for the pass: a settlement may still be confirming
    expect(await resolveUptoInDoubt(deps, Date.now())).to.deep.include({ settled: 0, cleared: 0, inDoubt: 0 });
    const pass = await resolveUptoInDoubt(deps, Date.now() + 60_000);
    expect(pass).to.deep.include({ settled: 1, cleared: 1 });
    expect(await marker(landed.policy)).to.deep.include({ state: 'done', transaction: landedTx.signature });
    expect(await marker(dead.policy), 'cleared: the authorization may settle again').to.equal(null);
    expect((await resolveUptoInDoubt(deps, Date.now() + 60_000)).read, 'both off the list').to.equal(0);
  });

  it('a Payment whose send the node answers -32005 is not refused: 503, and the same header again settles it once', async () => {
    const payer = h.payer();
    const header = (await buildPayment(upto, { wallet: payer, rpc: h.rpc })).header;
    const payload = payloadOf(header);
    node.behind.add(payload.payload.serializedTransaction);
    const first = await call(h.api.url, 'POST', '/v1/x402/settle', { paymentPayload: payload, paymentRequirements: upto }, { 'x-api-key': key });
    expect(first.status, `not the payer's refusal: ${JSON.stringify(first.body)}`).to.equal(503);
    node.behind.clear(); // the node caught up
    const again = await call(h.api.url, 'POST', '/v1/x402/settle', { paymentPayload: payload, paymentRequirements: upto }, { 'x-api-key': key });
    expect(again.body.success, JSON.stringify(again.body)).to.equal(true);
    const signature = bs58.encode(VersionedTransaction.deserialize(Buffer.from(payload.payload.serializedTransaction, 'base64')).signatures[0]!);
    expect(again.body.transaction).to.equal(signature);
  });
});

/*
 * The retry of a settlement that landed is answered from its marker before the bearer's
 * admission: the policy it completed reads Completed (and a settlement of the whole maximum
 * used the delegation up), and its JWT and deadline may have passed since. The policy cache
 * holds nothing here (X402_CACHE_MS 0): the retry reads the chain as one arriving after the
 * cache, or on another node, does. It was refused ("… is Completed") after the payer paid.
 */
describe('x402://upto: the retry of a settlement that landed, past the policy cache', function () {
  this.timeout(90_000);
  const MAX = 500_000n;
  let h: X402Harness;
  let node: Awaited<ReturnType<typeof lossyNode>>;
  let key = '';
  let upto: AcceptedRequirement;
  let merchant: Keypair;
  let offsetMs = 0;
  const clock = { now: () => Date.now() + offsetMs };
  const balance = async (owner: Keypair): Promise<bigint> => {
    const r = await h.rpc.call<{ value: { amount: string } }>('getTokenAccountBalance', [associatedTokenAddress(owner.publicKey.toBase58(), USDC_DEV)]);
    return BigInt(r.value.amount);
  };
  const authorize = async (payer: Keypair) => {
    const r = await call(h.api.url, 'POST', '/v1/x402/settle', { paymentPayload: payloadOf((await buildPayment(upto, { wallet: payer, rpc: h.rpc })).header), paymentRequirements: upto }, { 'x-api-key': key });
    expect(r.body.success, JSON.stringify(r.body)).to.equal(true);
    return r.body as { jwt: string; policy: string };
  };
  const build = (policy: string, amount: bigint) => buildUptoSettlement({ rpc: h.rpc, programId: PROGRAM_ID, policy, amount, signer: merchant });
  const usage = (jwt: string, amount: bigint, transaction: string) =>
    call(h.api.url, 'POST', '/v1/x402/usage', { jwt, paymentRequirements: upto, amount: amount.toString(), transaction }, { 'x-api-key': key });
  const status = async (policy: string) => {
    const read = await readProgramAccount(h.rpc, policy, 'PaymentPolicy', { programId: PROGRAM_ID });
    return read.kind === 'found' ? read.data['status'] : 'missing';
  };
  /** settles `amount` on a new authorization; the answer is lost (503), then the transaction lands */
  const settledInDoubt = async (payer: Keypair, amount: bigint) => {
    const a = await authorize(payer);
    const before = await balance(payer);
    const tx = await build(a.policy, amount);
    node.held.add(tx.serializedTransaction);
    expect((await usage(a.jwt, amount, tx.serializedTransaction)).status, 'the confirmation timed out').to.equal(503);
    await h.rpc.call('sendTransaction', [tx.serializedTransaction, { encoding: 'base64' }]);
    expect(await status(a.policy), 'the program completed the policy at its one payment').to.equal('Completed');
    expect(await balance(payer), 'the payer paid').to.equal(before - amount);
    return { ...a, tx };
  };

  before(async () => {
    node = await lossyNode();
    h = await startX402('upto-settled-retry', { SOLANA_RPC_URL: node.url, X402_CONFIRM_TIMEOUT_MS: '1500', X402_CACHE_MS: '0' }, { clock });
    node.target.url = h.ln.rpcUrl;
    const gw = h.ln.fixtures.gateways[0]!;
    merchant = Keypair.fromSecretKey(bs58.decode(gw.authoritySecretKey));
    ({ key, upto } = await registerUpto(h, gw, MAX, { description: 'charged by tokens used' }));
  });
  afterEach(() => { offsetMs = 0; });
  after(async () => {
    await h?.close();
    await node?.close();
  });

  it('the whole maximum, the policy read Completed: the retry gets the settled answer, and no second transaction', async () => {
    const payer = h.payer();
    const s = await settledInDoubt(payer, MAX);
    const after = await balance(payer);
    const landed = h.txCount();

    const retry = await usage(s.jwt, MAX, s.tx.serializedTransaction);
    expect(retry.status, JSON.stringify(retry.body)).to.equal(200);
    expect(retry.body, JSON.stringify(retry.body)).to.deep.include({ admitted: true, policy: s.policy, settled: { amount: MAX.toString(), transaction: s.tx.signature } });
    expect(h.txCount(), 'nothing sent by the retry').to.equal(landed);
    expect(await balance(payer), 'charged once').to.equal(after);
    expect((await usage(s.jwt, MAX, s.tx.serializedTransaction)).body.settled, 'and again').to.deep.equal({ amount: MAX.toString(), transaction: s.tx.signature });
  });

  it('its marker lost (Redis lost its keys, or it expired): the retry gets the settled answer from the chain, and no second transaction', async () => {
    const payer = h.payer();
    const s = await settledInDoubt(payer, MAX);
    await h.env.redis.del(`${h.api.ctx.config.redis.prefix}x402:upto:${s.policy}`);
    const landed = h.txCount();
    const retry = await usage(s.jwt, MAX, s.tx.serializedTransaction);
    expect(retry.body, JSON.stringify(retry.body)).to.deep.include({ admitted: true, policy: s.policy, settled: { amount: MAX.toString(), transaction: s.tx.signature } });
    expect(h.txCount(), 'nothing sent by the retry').to.equal(landed);
    // the same bytes reported for another amount are not this settlement: refused as before
    expect((await usage(s.jwt, MAX - 1n, s.tx.serializedTransaction)).body.admitted).to.equal(false);
  });

  it('past the JWT\'s expiry and the deadline: the retry gets the settled answer; a settlement not made is refused as before', async () => {
    const s = await settledInDoubt(h.payer(), 200_000n);
    const unsettled = await authorize(h.payer());
    offsetMs = 700_000; // past the authorization's window (maxTimeoutSeconds 600), which bounds its JWT
    const retry = await usage(s.jwt, 200_000n, s.tx.serializedTransaction);
    expect(retry.body, JSON.stringify(retry.body)).to.deep.include({ admitted: true, settled: { amount: '200000', transaction: s.tx.signature } });
    // only the expiry is let pass: a JWT whose signature does not verify, or one of another policy, is refused
    const forged = `${s.jwt.slice(0, -8)}${s.jwt.endsWith('AAAAAAAA') ? 'BBBBBBBB' : 'AAAAAAAA'}`;
    expect((await usage(forged, 200_000n, s.tx.serializedTransaction)).body).to.deep.equal({ admitted: false, reason: 'the JWT is not valid' });
    expect((await usage(unsettled.jwt, 200_000n, s.tx.serializedTransaction)).body).to.deep.equal({ admitted: false, reason: 'the JWT has expired' });

    const other = await build(s.policy, 1n);
    const refused = await usage(s.jwt, 1n, other.serializedTransaction);
    expect(refused.body, JSON.stringify(refused.body)).to.deep.equal({ admitted: false, reason: 'the JWT has expired' });
    const landed = h.txCount();
    const late = await build(unsettled.policy, 1n);
    expect((await usage(unsettled.jwt, 1n, late.serializedTransaction)).body).to.deep.equal({ admitted: false, reason: 'the JWT has expired' });
    expect(h.txCount(), 'the expired JWT settled nothing').to.equal(landed);
    expect(await status(unsettled.policy)).to.equal('Active');
  });
});
