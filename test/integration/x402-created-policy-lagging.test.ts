/**
 * A Payment whose transaction landed, read back by an RPC node that does not show the policy
 * yet (a pool of nodes, one behind the one that confirmed the transaction), is in doubt, not
 * refused: the chain answers that no account is there although the transaction that creates it
 * has landed and paid the first period. The service answered 402 ("no payment policy … after
 * the transaction"): the money was taken and the access refused, and a payer told its payment
 * failed pays again. It answers 503 now, and the same Payment header sent again is answered
 * with the policy and its JWT, without a second transaction.
 */
import { expect } from 'chai';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { DEMO_PATH, startX402, type X402Harness } from './x402-harness.js';
import { rpcStandIn, type RpcStandIn } from '../support/rpc-stand-in.js';

/** The localnet's RPC, answering getAccountInfo of the addresses in `behind` with no account, as a node behind does. */
async function laggingNode(): Promise<RpcStandIn & { behind: Set<string>; missed: number }> {
  const state = { behind: new Set<string>(), missed: 0 };
  const node = await rpcStandIn(async (asked, forward) => {
    const text = await forward();
    if (Array.isArray(asked) || asked.method !== 'getAccountInfo' || !state.behind.has(String(asked.params?.[0]))) return text;
    state.missed += 1;
    const answer = JSON.parse(text) as { result?: { value?: unknown } };
    if (answer.result) answer.result.value = null;
    return JSON.stringify(answer);
  });
  return { ...node, behind: state.behind, get missed() { return state.missed; } };
}

describe('x402: a policy its landed transaction created, read missing by a node behind, is in doubt (503), not refused', function () {
  this.timeout(60_000);
  let h: X402Harness;
  let node: Awaited<ReturnType<typeof laggingNode>>;

  before(async () => {
    node = await laggingNode();
    h = await startX402('created-policy-lagging', { SOLANA_RPC_URL: node.url });
    node.target.url = h.ln.rpcUrl;
  });
  after(async () => {
    await h?.close();
    await node?.close();
  });

  it('answers 503 while the node does not show the policy, then the same header is answered with its JWT; one transaction, one payment', async () => {
    const deferred = (await h.accepts()).find((a) => a.scheme === 'deferred')!;
    const built = await buildPayment(deferred, { wallet: h.payer(), rpc: h.rpc });
    node.behind.add(built.policyAddress);
    const transactions = h.txCount();

    const first = await fetch(`${h.api.url}${DEMO_PATH}`, { headers: { payment: built.header } });
    const refusal = (await first.json()) as { code?: string; error?: string };
    expect(first.status, `a landed payment read missing is not refused: ${JSON.stringify(refusal)}`).to.equal(503);
    expect(refusal.error).to.include('send the same Payment header again');
    expect(node.missed).to.be.at.least(1);
    expect(h.txCount(), 'the payment landed').to.equal(transactions + 1);
    const landed = await readProgramAccount(h.rpc, built.policyAddress, 'PaymentPolicy', { programId: PROGRAM_ID });
    expect(landed.kind === 'found' && Number(landed.data['payment_count'])).to.equal(1);

    // the node catches up: the same header resumes, finds the policy and answers it
    node.behind.clear();
    const again = await fetch(`${h.api.url}${DEMO_PATH}`, { headers: { payment: built.header } });
    const body = (await again.json()) as { jwt?: string };
    expect(again.status).to.equal(200);
    expect(body.jwt).to.be.a('string');
    expect(again.headers.get('payment-response')).to.include(`policy=${built.policyAddress}`);
    expect(h.txCount(), 'no second transaction').to.equal(transactions + 1);
    const after = await readProgramAccount(h.rpc, built.policyAddress, 'PaymentPolicy', { programId: PROGRAM_ID });
    expect(after.kind === 'found' && Number(after.data['payment_count']), 'paid once').to.equal(1);

    const served = await fetch(`${h.api.url}${DEMO_PATH}`, { headers: { authorization: `Bearer ${body.jwt!}` } });
    expect(served.status).to.equal(200);
  });
});
