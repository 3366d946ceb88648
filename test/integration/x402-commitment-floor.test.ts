/**
 * SOLANA_COMMITMENT sets the commitment of subscriptions and reads; `processed` is a
 * reasonable choice for fresh reads. It also set the commitment at which a payment counted
 * as settled: with `processed`, a JWT was issued for a transaction a fork could still drop
 * (and the settler and scheduler counted such a charge as paid). Money moves at
 * `confirmed` at least, whatever reads use. A chain that reports the payment processed for
 * a while: the settlement waits until it is confirmed.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { settlementCommitment } from '../../infra/solana/chain-reader.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';

interface Rpc { method?: string; id?: unknown; result?: { value?: ({ confirmationStatus?: string } | null)[] } }

/** The localnet's RPC, with every signature status reported `processed` while `holding`. */
async function processedWhileHolding(): Promise<{ url: string; target: string; holding: boolean; server: Server }> {
  const state = { url: '', target: '', holding: true, server: undefined as unknown as Server };
  state.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      fetch(state.target, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
        let text = await r.text();
        const asked = JSON.parse(body) as Rpc | Rpc[];
        if (state.holding && !Array.isArray(asked) && asked.method === 'getSignatureStatuses') {
          const answer = JSON.parse(text) as Rpc;
          for (const s of answer.result?.value ?? []) if (s) s.confirmationStatus = 'processed';
          text = JSON.stringify(answer);
        }
        res.writeHead(r.status, { 'content-type': 'application/json' });
        res.end(text);
      }).catch(() => { res.writeHead(502); res.end(); });
    });
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

describe('x402: a payment settles at confirmed at least, whatever SOLANA_COMMITMENT reads at', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let chain: Awaited<ReturnType<typeof processedWhileHolding>>;

  before(async () => {
    chain = await processedWhileHolding();
    h = await startX402('commitment-floor', { SOLANA_RPC_URL: chain.url, SOLANA_COMMITMENT: 'processed', X402_CONFIRM_TIMEOUT_MS: '20000' });
    chain.target = h.ln.rpcUrl;
  });
  after(async () => {
    await h?.close();
    await new Promise((r) => { chain?.server.closeAllConnections(); chain?.server.close(r); });
  });

  it('floors the settlement commitment at confirmed', () => {
    expect(['processed', 'confirmed', 'finalized'].map((c) => settlementCommitment(c as 'processed'))).to.deep.equal(['confirmed', 'confirmed', 'finalized']);
  });

  it('answers no JWT while the payment is only processed, and the JWT once it is confirmed', async () => {
    const deferred = (await h.accepts()).find((a) => a.scheme === 'deferred')!;
    const built = await buildPayment(deferred, { wallet: h.payer(), rpc: h.rpc });
    let answeredAt = 0;
    const paid = fetch(`${h.api.url}${DEMO_PATH}`, { headers: { payment: built.header } }).then(async (r) => {
      answeredAt = Date.now();
      return { status: r.status, body: (await r.json()) as { jwt?: string } };
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect(answeredAt, 'no answer while the chain reports the payment processed only').to.equal(0);
    const released = Date.now();
    chain.holding = false;
    const answer = await paid;
    expect(answer.status).to.equal(200);
    expect(answer.body.jwt).to.be.a('string');
    expect(answeredAt).to.be.at.least(released);
  });
});
