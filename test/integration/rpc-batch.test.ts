/**
 * JSON-RPC batch requests (rpc-client.ts, chain-reader.ts) against the localnet, which
 * serves batches as Solana's RPC does: answers in the order asked, null for a transaction
 * the node does not have, a per-call error kept to its call; and a node that refuses
 * batches answers one error object, which the client reports as such.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { createRpcClient, RpcResponseError } from '../../infra/solana/rpc-client.js';
import { createChainReader, type SignatureInfo } from '../../infra/solana/chain-reader.js';
import { PROGRAM_ID } from '../../infra/localnet/constants.js';

describe('JSON-RPC batch requests', function () {
  this.timeout(30_000);
  let ln: Localnet;
  let refusing: Server;

  before(async () => {
    ln = await startLocalnet({ port: 0, seed: 'rpc-batch', rate: 100 });
    await new Promise((r) => setTimeout(r, 1_000));
    refusing = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not allowed' } }));
    });
    await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    await ln?.close();
    refusing?.close();
  });

  it('answers each call of a batch in the order asked, the same as single calls', async () => {
    const rpc = createRpcClient({ url: ln.rpcUrl, timeoutMs: 10_000 });
    const reader = createChainReader(rpc, { commitment: 'confirmed' });
    const sigs = (await reader.getSignaturesForAddress(PROGRAM_ID.toBase58(), { limit: 30 })).filter((s: SignatureInfo) => !s.err);
    expect(sigs.length).to.be.greaterThan(5);
    const wanted = [...sigs.map((s) => s.signature)].reverse();
    const batched = await reader.getTransactions(wanted);
    const single = await Promise.all(wanted.map((s) => reader.getTransaction(s)));
    expect(batched).to.deep.equal(single);
    expect(batched.map((t) => t?.transaction.signatures[0])).to.deep.equal(wanted);
  });

  it('keeps a missing transaction (null) and a refused call (its error) to their own places', async () => {
    const rpc = createRpcClient({ url: ln.rpcUrl, timeoutMs: 10_000 });
    const [sig] = await rpc.call<{ signature: string }[]>('getSignaturesForAddress', [PROGRAM_ID.toBase58(), { limit: 1 }]);
    const unknown = '1'.repeat(88);
    const out = await rpc.batch('getTransaction', [[sig!.signature, { maxSupportedTransactionVersion: 0 }], [unknown, {}], [42, {}]]); // a signature that is not a string: Invalid params
    expect(out).to.have.length(3);
    expect(out[0]).to.be.an('object').and.not.be.instanceOf(RpcResponseError);
    expect(out[1]).to.equal(null);
    expect(out[2]).to.be.instanceOf(RpcResponseError);
  });

  it('reports a node that refuses batches by its error', async () => {
    const rpc = createRpcClient({ url: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`, timeoutMs: 5_000 });
    let err: unknown;
    try {
      await rpc.batch('getTransaction', [['x'], ['y']]);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(RpcResponseError);
    expect((err as RpcResponseError).message).to.include('batch requests are not allowed');
  });
});
