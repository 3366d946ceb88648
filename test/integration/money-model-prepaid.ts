/**
 * x402://prepaid in the money model, through the facilitator as a merchant that is not a
 * Node process uses it: a resource registered with a credit drawn of its seed, credits paid
 * by /v1/x402/settle, draws by /v1/x402/usage on either API node (bursts across both), and
 * the check: no credit is drawn past what was paid, every draw answered 200 is in the
 * ledger, and each credit was paid on chain once, for its amount.
 */
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import type { ChainPolicy } from './money-model-chain.js';
import type { Violation } from './money-model-checks.js';
import { count, newPayer, type World } from './money-model-world.js';
import { call, gatewayJwt, payloadOf } from './x402-facilitator-support.js';

export interface Prepaid { requirement: AcceptedRequirement; key: string; credits: { policy: string; jwt: string }[]; drawn: Map<string, number> }

export async function setupPrepaid(w: World): Promise<Prepaid> {
  const gw = w.s.h.ln.fixtures.gateways[0]!;
  const jwt = await gatewayJwt(w.s.h, gw.address, gw.authority);
  const key = (await call(w.nodes[0]!, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key as string;
  const price = w.terms.price;
  const reg = await call(w.nodes[0]!, 'PUT', '/v1/x402/resources', {
    resource: 'https://merchant.example/model', description: 'the money model\'s prepaid resource', accepts: [{
      scheme: 'x402://prepaid', network: w.sub.network, recipient: w.sub.recipient, gateway: gw.address, tokenMint: w.sub.tokenMint,
      amount: String(price * w.rng.int(3, 8)), pricePerRequest: String(price),
    }],
  }, { 'x-api-key': key });
  if (reg.status !== 200) throw new Error(`the prepaid resource was refused: ${JSON.stringify(reg.body)}`);
  return { requirement: reg.body.accepts[0] as AcceptedRequirement, key, credits: [], drawn: new Map() };
}

export async function payCredit(w: World, p: Prepaid): Promise<void> {
  const payer = newPayer(w);
  try {
    const built = await buildPayment(p.requirement, { wallet: payer.kp, rpc: w.s.h.rpc });
    const r = await call(w.nodes[w.rng.int(0, 1)]!, 'POST', '/v1/x402/settle',
      { x402Version: 2, paymentPayload: payloadOf(built.header), paymentRequirements: p.requirement }, { 'x-api-key': p.key });
    if (r.body?.success === true) p.credits.push({ policy: r.body.policy as string, jwt: r.body.jwt as string });
    else count(w, 'credit-refused');
  } catch {
    count(w, 'credit-answer-lost');
  }
}

/**
 * `n` draws of one credit at once, alternating between the API nodes; with `cut`, every other one's
 * merchant gives up after that many ms, often before the admission reaches it (an unanswered draw is
 * taken back: a hole in the credit the next draw takes).
 */
export async function draw(w: World, p: Prepaid, n: number, cut?: () => number): Promise<void> {
  if (p.credits.length === 0) return;
  const c = w.rng.pick(p.credits);
  const cuts = Array.from({ length: n }, (_, i) => (cut && i % 2 === 1 ? cut() : undefined));
  await Promise.all(cuts.map(async (cutAfterMs, i) => {
    const r = await call(w.nodes[i % 2]!, 'POST', '/v1/x402/usage', { jwt: c.jwt, paymentRequirements: p.requirement }, { 'x-api-key': p.key }, cutAfterMs).catch(() => undefined);
    const admitted = r?.status === 200 && r.body?.admitted === true;
    count(w, admitted ? 'draw-admitted' : 'draw-refused');
    if (admitted) p.drawn.set(c.policy, (p.drawn.get(c.policy) ?? 0) + 1);
  }));
}

export async function prepaidViolations(w: World, p: Prepaid, chain: Map<string, ChainPolicy>): Promise<Violation[]> {
  const db = w.s.h.env.db;
  const out: Violation[] = [];
  for (const c of await db.selectFrom('prepaid_credits').select(['policy', 'credit']).where('gateway', '=', w.s.gateway).execute()) {
    const draws = await db.selectFrom('prepaid_usage').select(['amount']).where('policy', '=', c.policy).execute();
    const drawn = draws.reduce((a, d) => a + BigInt(d.amount), 0n);
    if (drawn > BigInt(c.credit)) out.push({ invariant: 'prepaid draws never exceed the credit', policy: c.policy, expected: `≤ ${c.credit}`, found: String(drawn) });
    const answered = p.drawn.get(c.policy) ?? 0;
    if (answered > draws.length) out.push({ invariant: 'every draw admitted (200, admitted: true) is in the ledger', policy: c.policy, expected: `≥ ${answered} rows`, found: String(draws.length) });
    // a credit is paid once for its amount; an address paid again (its policy created anew) counts each payment
    const records = chain.get(c.policy)?.records ?? [];
    const payments = await db.selectFrom('prepaid_credit_payments').select(['amount']).where('policy', '=', c.policy).execute();
    const expected = payments.map((x) => x.amount).sort().join(',');
    if (records.map((r) => String(r.amount)).sort().join(',') !== expected) {
      out.push({ invariant: 'a credit is paid on chain once for each payment recorded, for its amount', policy: c.policy, expected: expected || 'none', found: records.map((r) => String(r.amount)).join(',') || 'none' });
    }
  }
  return out;
}
