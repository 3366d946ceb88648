/**
 * The hostile chain (LOCALNET_FAULTS), each fault seen as a client sees it through the
 * JSON-RPC: answers lost or erring after the transaction went through, transactions
 * landing slots later, statuses forgotten unless history is searched, blockhashes
 * expiring by slot, a lagging clock; the same seed gives the same faults.
 */
import { expect } from 'chai';
import { ComputeBudgetProgram, Connection, Keypair, type VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { MAX_CLOCK_LAG_MS, MIN_CLOCK_LAG_MS } from '../../infra/localnet/faults.js';
import { signedTransaction } from '../../infra/localnet/transactions.js';
import { rpcCall, startLocalnetProcess } from '../support/localnet-process.js';
import { runCli, waitFor } from '../support/process.js';

type Answer = { kind: 'signature'; signature: string } | { kind: 'dropped' } | { kind: 'http'; status: number; body: string }
  | { kind: 'rpc-error'; code: number; message: string; data?: unknown };

/** sendTransaction as raw JSON-RPC over HTTP, with whatever came back (or did not). */
async function send(url: string, tx: VersionedTransaction, cfg: Record<string, unknown> = {}): Promise<Answer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [Buffer.from(tx.serialize()).toString('base64'), { encoding: 'base64', ...cfg }] });
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  } catch {
    return { kind: 'dropped' };
  }
  const text = await res.text();
  if (res.status !== 200) return { kind: 'http', status: res.status, body: text };
  const json = JSON.parse(text) as { result?: string; error?: { code: number; message: string; data?: unknown } };
  return json.error ? { kind: 'rpc-error', ...json.error } : { kind: 'signature', signature: json.result ?? '' };
}

const label = (a: Answer): string => (a.kind === 'http' ? `http ${a.status}` : a.kind === 'rpc-error' ? `rpc ${a.code}` : a.kind);
const signatureOf = (tx: VersionedTransaction): string => bs58.encode(tx.signatures[0]!);

interface Net { ln: Localnet; conn: Connection; payer: Keypair; tx(n: number, blockhash?: string): Promise<VersionedTransaction> }

async function start(faults: string, faultsSeed = 'faults-test'): Promise<Net> {
  const ln = await startLocalnet({ port: 0, seed: 'faults-chain', rate: 0, faults, faultsSeed });
  const conn = new Connection(ln.rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true });
  const payer = Keypair.fromSecretKey(bs58.decode(ln.fixtures.wallets.find((w) => w.role === 'spare')!.secretKey));
  return {
    ln, conn, payer,
    // a distinct transaction per n: a compute unit price is all it does
    tx: async (n, blockhash) => signedTransaction(payer, [], [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: n })],
      blockhash ?? (await conn.getLatestBlockhash()).blockhash),
  };
}

const landed = (net: Net, signature: string, searchTransactionHistory = false): Promise<number> =>
  waitFor(async () => (await net.conn.getSignatureStatuses([signature], { searchTransactionHistory })).value[0]?.slot, 30_000, `${signature} to land`);

describe('localnet faults (LOCALNET_FAULTS): a hostile RPC node', function () {
  this.timeout(120_000); // each test is seconds; the margin is for a loaded machine
  const nets: Net[] = [];
  const open = async (faults: string, seed?: string): Promise<Net> => {
    const n = await start(faults, seed);
    nets.push(n);
    return n;
  };
  after(async () => {
    for (const n of nets) await n.ln.close();
  });

  it('lost-answer: the answer to sendTransaction is lost (dropped, 502, internal error), yet the transaction landed', async () => {
    const net = await open('lost-answer=1');
    const seen = new Set<string>();
    for (let i = 1; i <= 12; i += 1) {
      const tx = await net.tx(i);
      const answer = await send(net.ln.rpcUrl, tx);
      expect(answer.kind).to.not.equal('signature');
      seen.add(label(answer));
      expect(await landed(net, signatureOf(tx))).to.be.greaterThan(0);
    }
    expect([...seen].sort()).to.deep.equal(['dropped', 'http 502', 'rpc -32603']);
    // a batch of sends: each one lands, whatever became of the answer
    const batch = [await net.tx(100), await net.tx(101)];
    await fetch(net.ln.rpcUrl, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch.map((tx, id) => ({ jsonrpc: '2.0', id, method: 'sendTransaction', params: [Buffer.from(tx.serialize()).toString('base64'), { encoding: 'base64' }] }))),
    }).then((r) => r.text(), () => undefined);
    for (const tx of batch) expect(await landed(net, signatureOf(tx))).to.be.greaterThan(0);
  });

  it('send-errors: sendTransaction answers -32005 node behind (numSlotsBehind) or 429, though the transaction went through', async () => {
    const net = await open('send-errors=1');
    const seen = new Set<string>();
    for (let i = 1; i <= 8; i += 1) {
      const tx = await net.tx(i);
      const answer = await send(net.ln.rpcUrl, tx);
      seen.add(label(answer));
      if (answer.kind === 'rpc-error') {
        expect(answer.code).to.equal(-32005);
        const behind = (answer.data as { numSlotsBehind: number }).numSlotsBehind;
        expect(answer.message).to.equal(`Node is behind by ${behind} slots`);
      } else expect(answer).to.include({ kind: 'http', status: 429 });
      expect(await landed(net, signatureOf(tx))).to.be.greaterThan(0);
    }
    expect([...seen].sort()).to.deep.equal(['http 429', 'rpc -32005']);
  });

  it('delayed-landing: the signature comes back at once, the status is null until the transaction lands slots later', async () => {
    const net = await open('delayed-landing=1');
    const tx = await net.tx(1);
    // the send and a status read in one batch: answered in the same slot, before any landing
    const [sent, status] = await (await fetch(net.ln.rpcUrl, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [Buffer.from(tx.serialize()).toString('base64'), { encoding: 'base64' }] },
        { jsonrpc: '2.0', id: 2, method: 'getSignatureStatuses', params: [[signatureOf(tx)], { searchTransactionHistory: true }] },
      ]),
    })).json() as [{ result: string }, { result: { context: { slot: number }; value: unknown[] } }];
    expect(sent.result).to.equal(signatureOf(tx));
    expect(status.result.value).to.deep.equal([null]);
    // sent again while waiting (or once landed): never a second landing
    await send(net.ln.rpcUrl, tx);
    expect(await landed(net, signatureOf(tx))).to.be.greaterThan(status.result.context.slot);
    expect(net.ln.chain.transactions().filter((t) => t.signature === signatureOf(tx))).to.have.length(1);
  });

  it('forgetful-status: a status older than the status window is null unless searchTransactionHistory is asked', async () => {
    const net = await open('forgetful-status');
    const tx = await net.tx(1);
    expect((await send(net.ln.rpcUrl, tx)).kind).to.equal('signature');
    const slot = await landed(net, signatureOf(tx));
    await rpcCall(net.ln.rpcUrl, 'tributary_advanceSlots', [301]);
    const [forgotten] = (await net.conn.getSignatureStatuses([signatureOf(tx)])).value;
    expect(forgotten).to.equal(null);
    const [found] = (await net.conn.getSignatureStatuses([signatureOf(tx)], { searchTransactionHistory: true })).value;
    expect(found?.slot).to.equal(slot);
    expect(found?.confirmationStatus).to.equal('finalized');
  });

  it('without faults every status is kept and every send answered with its signature', async () => {
    const net = await open('');
    const tx = await net.tx(1);
    expect(await send(net.ln.rpcUrl, tx)).to.deep.equal({ kind: 'signature', signature: signatureOf(tx) });
    expect(net.ln.chain.transaction(signatureOf(tx))).to.not.equal(undefined);
    await rpcCall(net.ln.rpcUrl, 'tributary_advanceSlots', [301]);
    expect((await net.conn.getSignatureStatuses([signatureOf(tx)])).value[0]?.slot).to.be.a('number');
  });

  it('blockhash-expiry: a blockhash is valid through lastValidBlockHeight; after it, the transaction is refused and never lands', async () => {
    const net = await open('blockhash-expiry,delayed-landing=1');
    const { blockhash, lastValidBlockHeight } = await net.conn.getLatestBlockhash();
    const valid = async (): Promise<boolean> => {
      const { context, value } = await net.conn.isBlockhashValid(blockhash);
      expect(value, `at slot ${context.slot}`).to.equal(context.slot <= lastValidBlockHeight);
      return value;
    };
    expect(await valid()).to.equal(true);
    await rpcCall(net.ln.rpcUrl, 'tributary_advanceSlots', [Math.max(1, lastValidBlockHeight - await net.conn.getBlockHeight())]);
    // sent in the blockhash's last slot (or just after): accepted at most, it waits past expiry, and is dropped
    const late = await net.tx(1, blockhash);
    const lateAnswer = await send(net.ln.rpcUrl, late, { skipPreflight: true });
    expect(lateAnswer.kind).to.equal('signature');
    await rpcCall(net.ln.rpcUrl, 'tributary_advanceSlots', [1]);
    expect(await valid()).to.equal(false);
    const refused = await send(net.ln.rpcUrl, await net.tx(2, blockhash));
    expect(refused).to.deep.include({ kind: 'rpc-error', code: -32002 });
    expect((refused as { data: { err: unknown } }).data.err).to.equal('BlockhashNotFound');
    await rpcCall(net.ln.rpcUrl, 'tributary_advanceSlots', [20]);
    const statuses = await net.conn.getSignatureStatuses([signatureOf(late)], { searchTransactionHistory: true });
    expect(statuses.value[0]).to.equal(null);
  });

  it('clock-lag: block times lag wall time by one to a few seconds', async () => {
    const net = await open('clock-lag');
    for (let i = 0; i < 10; i += 1) {
      const slot = await net.conn.getSlot();
      const lag = Date.now() / 1000 - (await net.conn.getBlockTime(slot) ?? 0);
      // at least the least lag; at most the most, plus what a starved process is late producing a slot
      expect(lag, `slot ${slot}`).to.be.within(MIN_CLOCK_LAG_MS / 1000, MAX_CLOCK_LAG_MS / 1000 + 5);
      await new Promise((r) => setTimeout(r, 300));
    }
  });

  it('one clock: a PaymentRecord carries its block time (Clock::unix_timestamp), lagging or not', async () => {
    const ln = await startLocalnet({ port: 0, seed: 'faults-clock', rate: 40, faults: 'clock-lag', faultsSeed: 'lag' });
    nets.push({ ln } as Net);
    const conn = new Connection(ln.rpcUrl, 'confirmed');
    const records = await waitFor(async () => {
      const page = await rpcCall<{ events: { name: string; signature: string; data: { timestamp: string } }[] }>(
        ln.rpcUrl, 'tributary_getLedger', [{ offset: 0, limit: 10_000 }]);
      const found = page.events.filter((e) => e.name === 'PaymentRecord');
      return found.length >= 5 ? found : undefined;
    }, 40_000, 'the workload to execute payments');
    for (const r of records.slice(0, 5)) {
      const tx = await conn.getTransaction(r.signature, { maxSupportedTransactionVersion: 0 });
      expect(Number(r.data.timestamp), r.signature).to.equal(tx?.blockTime);
    }
  });

  it('the same faults seed gives the same faults, another seed others', async () => {
    const sequence = async (seed: string): Promise<string[]> => {
      const net = await open('all', seed);
      const out: string[] = [];
      for (let i = 1; i <= 16; i += 1) out.push(label(await send(net.ln.rpcUrl, await net.tx(i))));
      const { log } = await rpcCall<{ log: { fault: string; detail: string }[] }>(net.ln.rpcUrl, 'tributary_getFaults');
      return [...out, ...log.filter((l) => l.fault !== 'clock-lag').map((l) => `${l.fault}:${l.detail}`)];
    };
    const first = await sequence('replay-me');
    expect(first.filter((a) => a !== 'signature')).to.not.have.length(0);
    expect(await sequence('replay-me')).to.deep.equal(first);
    expect(await sequence('another')).to.not.deep.equal(first);
  });

  it('`tributary localnet` takes LOCALNET_FAULTS and LOCALNET_FAULTS_SEED, says which faults are on, and refuses an unknown fault', async function () {
    this.timeout(180_000); // two processes started as a user starts them
    const ln = await startLocalnetProcess({ seed: 'faults-cli', rate: 0, maxEvents: 0, faults: 'lost-answer=0.5,clock-lag', faultsSeed: 'cli' });
    try {
      const faults = await ln.rpc<{ seed: string; faults: string }>('tributary_getFaults');
      expect(faults).to.deep.include({ seed: 'cli', faults: 'lost-answer=0.5,clock-lag=0.05' });
      // the log line reaches this process's pipe on its own time (CI once read it before it came)
      await waitFor(async () => ln.proc.output().includes('localnet faults on:'), 10_000, 'the faults log line').catch(() => undefined);
      expect(ln.proc.output()).to.include('localnet faults on: lost-answer=0.5,clock-lag=0.05');
    } finally {
      await ln.stop();
    }
    const bad = await runCli(['localnet'], { LOCALNET_PORT: '1', LOCALNET_FAULTS: 'lost-answers' });
    expect(bad.code).to.not.equal(0);
    expect(bad.output).to.include('LOCALNET_FAULTS: unknown fault "lost-answers"');
  });
});
