/**
 * The soak's settlement traffic, through the real 402 Payment flow on the demo resource
 * (a fixture gateway the scheduler serves): short-period `deferred` subscriptions
 * (X402_DEMO_FREQUENCY=Custom:N, first period paid in the Payment transaction, then
 * executed by the scheduler), and `x402://payg` policies whose bearers call the demo at a
 * steady rate through nginx, each admitted call metered into the usage ledger and charged
 * by the settler. The payers are funded fixture wallets the workload never pays from; a
 * wallet holds at most one policy of each (the service answers a payer who already holds
 * an Active policy with the same terms with that one), and its payments are made one
 * after the other (each Payment transaction approves the delegate for all of them).
 */
import type { Keypair } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';

export const DEMO_PATH = '/v1/x402/demo';

export interface SettlementPlan { subscriptions: number; paygPolicies: number; paygRate: number }

/** unavailable: 503 with Retry-After (the service could not answer, and said when to ask again); errors: any other 5xx or no answer */
export interface PaygCounts { sent: number; ok: number; refused: number; unavailable: number; errors: number }

/** The bearer calls lost (5xx but a 503 with Retry-After, or no answer): when, and what came back. */
export interface LostCall { at: number; what: string }

export interface SettlementLoad {
  /** policies created by a Payment the service answered (a refused or lost answer may still have created one) */
  subscriptions: string[];
  payg: string[];
  paymentErrors: string[];
  /** bearer calls per payg policy; `ok` includes the Payment's own first call */
  calls: Map<string, PaygCounts>;
  lost: LostCall[];
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pay(url: string, rpcUrl: string, wallet: Keypair, scheme: 'deferred' | 'x402://payg'): Promise<{ policy: string; jwt: string }> {
  // the localnet answers slowly under the workload on a loaded machine
  const r = await payAndFetch(url, { wallet, rpcUrl, scheme, rpcTimeoutMs: 30_000 });
  if (r.response.status !== 200 || !r.paid?.policy) throw new Error(`${scheme}: HTTP ${r.response.status} after the payment`);
  return { policy: r.paid.policy, jwt: r.paid.jwt };
}

export async function startSettlementLoad(
  baseUrl: string, rpcUrl: string, wallets: readonly Keypair[], plan: SettlementPlan, log: (s: string) => void,
): Promise<SettlementLoad> {
  const url = `${baseUrl}${DEMO_PATH}`;
  const load: SettlementLoad = { subscriptions: [], payg: [], paymentErrors: [], calls: new Map(), lost: [], stop: async () => undefined };
  const jwts: { policy: string; jwt: string }[] = [];
  // one queue of payments per wallet, the wallets in parallel
  const queues = wallets.map(() => [] as ('deferred' | 'x402://payg')[]);
  for (let i = 0; i < Math.min(plan.subscriptions, wallets.length); i += 1) queues[i]!.push('deferred');
  for (let i = 0; i < Math.min(plan.paygPolicies, wallets.length); i += 1) queues[wallets.length - 1 - i]!.push('x402://payg');
  await Promise.all(queues.map(async (q, w) => {
    for (const scheme of q) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const p = await pay(url, rpcUrl, wallets[w]!, scheme);
          // a retry after a lost answer gets the policy the lost one created
          if (scheme === 'deferred') { if (!load.subscriptions.includes(p.policy)) load.subscriptions.push(p.policy); }
          else if (!load.calls.has(p.policy)) { load.payg.push(p.policy); jwts.push(p); load.calls.set(p.policy, { sent: 1, ok: 1, refused: 0, unavailable: 0, errors: 0 }); }
          break;
        } catch (err) {
          load.paymentErrors.push(`${scheme}: ${(err as Error).message}`);
          if (attempt >= 5) break;
          await sleep(2000);
        }
      }
    }
  }));
  log(`settlement: ${load.subscriptions.length} deferred subscriptions, ${load.payg.length} pay-as-you-go policies paid through ${DEMO_PATH}${load.paymentErrors.length ? `; payment errors: ${load.paymentErrors.join('; ')}` : ''}`);
  if (jwts.length === 0 || plan.paygRate === 0) return load;

  let running = true;
  const inFlight = new Set<Promise<void>>();
  const call = async (p: { policy: string; jwt: string }): Promise<void> => {
    const c = load.calls.get(p.policy)!;
    c.sent += 1;
    const at = Date.now();
    try {
      const res = await fetch(url, { headers: { authorization: `Bearer ${p.jwt}` }, signal: AbortSignal.timeout(30_000) });
      const body = Buffer.from(await res.arrayBuffer()).toString('utf8');
      if (res.status === 200) c.ok += 1;
      else if (res.status === 402) c.refused += 1;
      else if (res.status === 503 && res.headers.get('retry-after')) { c.unavailable += 1; if (process.env['SOAK_503_LOG']) process.stderr.write(`[503] ${new Date(at).toISOString()} ${body.slice(0, 300)}\n`); }
      else { c.errors += 1; load.lost.push({ at, what: `${res.status} ${body.slice(0, 120)}` }); }
    } catch (err) {
      c.errors += 1;
      load.lost.push({ at, what: `no answer: ${(err as Error).message}` });
    }
  };
  const loop = (async () => {
    const every = 1000 / plan.paygRate;
    let next = Date.now();
    for (let n = 0; running; n += 1) {
      const p = jwts[n % jwts.length]!;
      if (inFlight.size < 64) {
        const f = call(p).finally(() => inFlight.delete(f));
        inFlight.add(f);
      }
      next += every;
      await sleep(Math.max(0, next - Date.now()));
    }
  })();
  load.stop = async () => {
    running = false;
    await loop;
    await Promise.all(inFlight);
  };
  return load;
}
