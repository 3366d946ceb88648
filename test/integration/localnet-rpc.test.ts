/**
 * The localnet speaks Solana's JSON-RPC as @solana/web3.js expects it: reads of slots,
 * signatures, transactions and accounts, and signed transactions landing with the
 * program's events, visible to getTransaction and to a logs subscription.
 */
import { expect } from 'chai';
import { Connection, Keypair, PublicKey, SendTransactionError, type Logs } from '@solana/web3.js';
import bs58 from 'bs58';
import { decodeAccount } from '../../src/kernel/events/codec.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { bn, fixedText, zeros } from '../../infra/localnet/program/model.js';
import { signedTransaction } from '../../infra/localnet/transactions.js';
import { dataOf } from '../support/anchor-events.js';

const USDC = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');

describe('localnet JSON-RPC (web3.js Connection)', function () {
  this.timeout(30_000);
  let ln: Localnet;
  let conn: Connection;
  let programId: PublicKey;

  before(async () => {
    ln = await startLocalnet({ port: 0, seed: 'rpc-test', rate: 60 });
    conn = new Connection(ln.rpcUrl, { commitment: 'confirmed', wsEndpoint: ln.wsUrl });
    programId = new PublicKey(ln.fixtures.programId);
    await new Promise((r) => setTimeout(r, 1_500));
  });
  after(async () => {
    // web3.js keeps its websocket client reconnecting; close it before the server goes
    const ws = (conn as unknown as { _rpcWebSocket: { close(): void; setAutoReconnect(on: boolean): void } })._rpcWebSocket;
    ws.setAutoReconnect(false);
    ws.close();
    await ln.close();
  });

  it('reports slots, blockhashes and health', async () => {
    const slot = await conn.getSlot();
    expect(slot).to.be.greaterThan(0);
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
    const after = await conn.getSlot();
    expect(bs58.decode(blockhash)).to.have.length(32);
    // the chain keeps producing slots: the blockhash is of a slot between the two reads
    expect(lastValidBlockHeight).to.be.within(slot + 150, after + 150);
    expect(await conn.getBlockHeight()).to.be.at.least(after);
    expect((await conn.getVersion())['solana-core']).to.be.a('string');
  });

  it('pages signatures newest first with before and until', async () => {
    const all = await conn.getSignaturesForAddress(programId, { limit: 20 });
    expect(all).to.have.length(20);
    const slots = all.map((s) => s.slot);
    expect([...slots].sort((a, b) => b - a)).to.deep.equal(slots);
    const page2 = await conn.getSignaturesForAddress(programId, { limit: 5, before: all[4]!.signature });
    expect(page2.map((s) => s.signature)).to.deep.equal(all.slice(5, 10).map((s) => s.signature));
    const newer = await conn.getSignaturesForAddress(programId, { limit: 1000, until: all[10]!.signature, before: all[2]!.signature });
    expect(newer.map((s) => s.signature)).to.deep.equal(all.slice(3, 10).map((s) => s.signature));
    expect(all[0]).to.include.keys('signature', 'slot', 'err', 'memo', 'blockTime', 'confirmationStatus');
  });

  it('returns transactions with logs carrying Anchor event data', async () => {
    const [first] = await conn.getSignaturesForAddress(programId, { limit: 1 });
    const tx = await conn.getTransaction(first!.signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
    expect(tx?.meta?.logMessages).to.include(`Program ${programId.toBase58()} invoke [1]`);
    expect(tx?.transaction.signatures[0]).to.equal(first!.signature);
    expect(tx?.version).to.equal(0); // the workload sends v0 messages, as today's wallets do
    expect(tx?.meta?.loadedAddresses).to.deep.equal({ writable: [], readonly: [] });
    const withEvents = ln.ledger()[0]!;
    const created = await conn.getTransaction(withEvents.signature, { maxSupportedTransactionVersion: 0 });
    expect(created?.meta?.logMessages?.some((l) => l.startsWith('Program data: '))).to.equal(true);
  });

  it('answers each encoding of a transaction as asked, however often and in whatever order it is asked', async () => {
    const post = async (body: unknown): Promise<unknown> =>
      (await fetch(ln.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const { signature } = (await conn.getSignaturesForAddress(programId, { limit: 1 }))[0]!;
    const asks = [
      { encoding: 'json', maxSupportedTransactionVersion: 0 },
      { encoding: 'base64', maxSupportedTransactionVersion: 0 },
      { encoding: 'json', maxSupportedTransactionVersion: 0 },
      { encoding: 'base58', maxSupportedTransactionVersion: 0 },
    ];
    const single = [];
    for (const [i, cfg] of asks.entries()) single.push(await post({ jsonrpc: '2.0', id: `s${i}`, method: 'getTransaction', params: [signature, cfg] }));
    const batch = (await post(asks.map((cfg, i) => ({ jsonrpc: '2.0', id: i, method: 'getTransaction', params: [signature, cfg] })))) as { id: number; result: { transaction: unknown; version: unknown } }[];
    const results = (single as { id: string; result: { transaction: unknown; version: unknown } }[]).map((r) => r.result);
    expect((single as { id: string }[]).map((r) => r.id)).to.deep.equal(['s0', 's1', 's2', 's3']);
    expect(batch.map((r) => r.id)).to.deep.equal([0, 1, 2, 3]);
    expect(batch.map((r) => r.result)).to.deep.equal(results);
    expect((results[0]!.transaction as { signatures: string[] }).signatures[0]).to.equal(signature);
    expect(results[2]).to.deep.equal(results[0]);
    const [wire64, enc64] = results[1]!.transaction as [string, string];
    const [wire58, enc58] = results[3]!.transaction as [string, string];
    expect([enc64, enc58]).to.deep.equal(['base64', 'base58']);
    expect(bs58.encode(Buffer.from(wire64, 'base64'))).to.equal(wire58);
    expect(results.map((r) => r.version)).to.deep.equal([0, 0, 0, 0]);
    // web3.js's legacy read leaves out maxSupportedTransactionVersion: a v0 transaction is then refused, not served from a rendering that carries a version
    const refused = (await post({ jsonrpc: '2.0', id: 9, method: 'getTransaction', params: [signature, { encoding: 'json' }] })) as { error?: { code: number } };
    expect(refused.error?.code).to.equal(-32015);
    // a legacy transaction carries `version` only when the client said which versions it reads
    const legacy = ln.chain.transactions().find((t) => t.version === 'legacy');
    expect(legacy, 'a legacy transaction in the history').to.not.equal(undefined);
    const ask = async (cfg: Record<string, unknown>): Promise<Record<string, unknown>> =>
      ((await post({ jsonrpc: '2.0', id: 10, method: 'getTransaction', params: [legacy!.signature, cfg] })) as { result: Record<string, unknown> }).result;
    const unversioned = await ask({ encoding: 'json' });
    const versioned = await ask({ encoding: 'json', maxSupportedTransactionVersion: 0 });
    expect(unversioned).to.not.have.property('version');
    expect(versioned.version).to.equal('legacy');
    expect(await ask({ encoding: 'json' })).to.deep.equal(unversioned);
  });

  it('serves accounts in the IDL layouts and SPL mints with decimals', async () => {
    const gw = ln.fixtures.gateways[0]!;
    const info = await conn.getAccountInfo(new PublicKey(gw.address));
    expect(info?.owner.toBase58()).to.equal(programId.toBase58());
    expect(decodeAccount('PaymentGateway', info!.data)['authority']).to.equal(gw.authority);
    const mint = await conn.getAccountInfo(USDC);
    expect(mint?.data.length).to.equal(82);
    expect(mint?.data[44]).to.equal(6);
    const many = await conn.getMultipleAccountsInfo([USDC, Keypair.generate().publicKey]);
    expect(many[1]).to.equal(null);
    const gateways = await conn.getProgramAccounts(programId, {
      filters: [{ memcmp: { offset: 8, bytes: gw.authority } }],
    });
    expect(gateways.map((g) => g.pubkey.toBase58())).to.deep.equal([gw.address]);
  });

  it('lands a signed create_user_payment + create_payment_policy and notifies logs subscribers', async () => {
    const spare = ln.fixtures.wallets.find((w) => w.role === 'spare')!;
    const user = Keypair.fromSecretKey(bs58.decode(spare.secretKey));
    const gateway = new PublicKey(ln.fixtures.gateways[1]!.address);
    const up = pdas.userPayment(user.publicKey, USDC);
    const policy = pdas.paymentPolicy(up, 1);
    const seen: Logs[] = [];
    const sub = conn.onLogs(programId, (l) => seen.push(l), 'confirmed');
    await new Promise((r) => setTimeout(r, 200));
    const ixs = [
      tributaryIx('create_user_payment', {
        owner: user.publicKey, user_payment: up, token_account: pdas.associatedToken(user.publicKey, USDC), token_mint: USDC,
        config: pdas.config(), fee_payer: user.publicKey,
      }),
      tributaryIx('create_payment_policy', {
        user: user.publicKey, user_payment: up, recipient: Keypair.generate().publicKey, token_mint: USDC, gateway,
        config: pdas.config(), payment_policy: policy, fee_payer: user.publicKey,
      }, {
        policy_type: { Subscription: { amount: bn(5_000_000), auto_renew: true, max_renewals: null, payment_frequency: { Monthly: {} }, next_payment_due: bn(0), padding: zeros(97) } },
        memo: fixedText('trk-x402-1', 64),
      }),
    ];
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
    const tx = signedTransaction(user, [], ixs, blockhash);
    const signature = await conn.sendTransaction(tx);
    const confirmation = await conn.confirmTransaction({ signature, blockhash, lastValidBlockHeight }, 'confirmed');
    expect(confirmation.value.err).to.equal(null);
    const events = ln.ledger().filter((e) => e.signature === signature);
    expect(events.map((e) => [e.name, e.ixPath, e.index])).to.deep.equal([['UserPaymentCreated', '0', 0], ['PaymentPolicyCreated', '1', 1]]);
    expect(dataOf(events[1])['memo']).to.equal('trk-x402-1');
    expect(dataOf(events[1])['created_policies_count']).to.equal(0);
    expect(dataOf(events[1])['policy_id']).to.equal(1);
    const stored = await conn.getAccountInfo(policy);
    const decoded = decodeAccount('PaymentPolicy', stored!.data);
    expect(decoded['status']).to.equal('Active');
    const due = (decoded['policy_type'] as { next_payment_due: string }).next_payment_due;
    expect(Number(due)).to.be.closeTo(Date.now() / 1000, 5);
    for (let i = 0; i < 20 && !seen.some((l) => l.signature === signature); i += 1) await new Promise((r) => setTimeout(r, 100));
    await conn.removeOnLogsListener(sub);
    expect(seen.find((l) => l.signature === signature)?.logs.filter((l) => l.startsWith('Program data:'))).to.have.length(2);
  });

  it('rejects a policy with the wrong id as a failed preflight with program logs', async () => {
    const owner = Keypair.fromSecretKey(bs58.decode(ln.fixtures.wallets.find((w) => w.role === 'spare')!.secretKey));
    const up = pdas.userPayment(owner.publicKey, USDC);
    const ix = tributaryIx('create_payment_policy', {
      user: owner.publicKey, user_payment: up, recipient: owner.publicKey, token_mint: USDC,
      gateway: new PublicKey(ln.fixtures.gateways[0]!.address), config: pdas.config(),
      payment_policy: pdas.paymentPolicy(up, 7), fee_payer: owner.publicKey,
    }, { policy_type: { UpTo: { max_amount: bn(10), valid_after: bn(0), deadline: bn(10), padding: zeros(104) } }, memo: zeros(64) });
    const tx = signedTransaction(owner, [], [ix], (await conn.getLatestBlockhash()).blockhash);
    const err = await conn.sendTransaction(tx).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(SendTransactionError);
    const logs = (err as SendTransactionError).logs ?? [];
    expect(logs.join('\n')).to.include('Error Code: ConstraintSeeds');
    expect((err as Error).message).to.include('custom program error: 0x7d6');
  });

  it('answers JSON-RPC errors and batches as Solana does', async () => {
    const post = async (body: unknown): Promise<unknown> =>
      (await fetch(ln.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const batch = (await post([
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
      { jsonrpc: '2.0', id: 3, method: 'getBalance', params: ['not-a-key'] },
    ])) as { id: number; result?: unknown; error?: { code: number } }[];
    expect(batch.map((r) => r.error?.code ?? 'ok')).to.deep.equal(['ok', -32601, -32602]);
    const user = Keypair.generate();
    const tx = signedTransaction(user, [], [], (await conn.getLatestBlockhash()).blockhash);
    tx.signatures[0] = new Uint8Array(64).fill(7);
    const bad = (await post({ jsonrpc: '2.0', id: 4, method: 'sendTransaction', params: [Buffer.from(tx.serialize()).toString('base64'), { encoding: 'base64' }] })) as { error: { code: number } };
    expect(bad.error.code).to.equal(-32003);
    const ledger = (await post({ jsonrpc: '2.0', id: 5, method: 'tributary_getLedger', params: [{ offset: 0, limit: 3 }] })) as { result: { events: unknown[]; total: number } };
    expect(ledger.result.events).to.have.length(3);
    expect(ledger.result.total).to.be.at.least(3);
  });
});
