/**
 * SOLANA_COMMITMENT sets the commitment of subscriptions and reads; `processed` is a
 * reasonable choice for fresh reads. It also set the commitment at which a payment counted
 * as settled: with `processed`, a JWT was issued for a transaction a fork could still drop
 * (and the settler and scheduler counted such a charge as paid). Money moves at
 * `confirmed` at least, whatever reads use. A chain that reports the payment processed for
 * a while: the settlement waits until it is confirmed.
 */
import { expect } from 'chai';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { settlementCommitment } from '../../infra/solana/chain-reader.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';
import { rpcStandIn, type RpcStandIn } from '../support/rpc-stand-in.js';

/** The localnet's RPC, with every signature status reported `processed` while `holding`. */
async function processedWhileHolding(): Promise<RpcStandIn & { holding: boolean }> {
  const state = { holding: true };
  const node = await rpcStandIn(async (asked, forward) => {
    const text = await forward();
    if (!state.holding || Array.isArray(asked) || asked.method !== 'getSignatureStatuses') return text;
    const answer = JSON.parse(text) as { result?: { value?: ({ confirmationStatus?: string } | null)[] } };
    for (const s of answer.result?.value ?? []) if (s) s.confirmationStatus = 'processed';
    return JSON.stringify(answer);
  });
  return { ...node, get holding() { return state.holding; }, set holding(v: boolean) { state.holding = v; } };
}

describe('x402: a payment settles at confirmed at least, whatever SOLANA_COMMITMENT reads at', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let chain: Awaited<ReturnType<typeof processedWhileHolding>>;

  before(async () => {
    chain = await processedWhileHolding();
    h = await startX402('commitment-floor', { SOLANA_RPC_URL: chain.url, SOLANA_COMMITMENT: 'processed', X402_CONFIRM_TIMEOUT_MS: '20000' });
    chain.target.url = h.ln.rpcUrl;
  });
  after(async () => {
    await h?.close();
    await chain?.close();
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
