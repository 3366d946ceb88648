/**
 * What the in-doubt tests of the scheduler start from: a `deferred` payment, then its next
 * due intent claimed by a scheduler ('dead') that signed the execution and stored it
 * (markSending) before it died, its bytes sent or not by the test.
 */
import { expect } from 'chai';
import { payAndFetch } from '../../src/app/index.js';
import { claimIntents, enqueueDue, markSending, type Intent } from '../../commands/scheduler/intents.js';
import { syncGatewayStates } from '../../commands/scheduler/gateway-sync.js';
import { latestBlockhash, readExecutionContext, signExecution, type SignedExecution } from '../../commands/scheduler/chain.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import type { SchedulerHarness } from './scheduler-harness.js';

export async function intentStoredByDeadScheduler(s: SchedulerHarness): Promise<{ policy: string; claimed: Intent; signed: SignedExecution; paidBefore: number }> {
  const db = s.h.env.db;
  const r = await payAndFetch(`${s.h.api.url}${DEMO_PATH}`, { wallet: s.h.payer(), rpcUrl: s.h.ln.rpcUrl, scheme: 'deferred' });
  expect(r.response.status).to.equal(200);
  const policy = r.paid!.policy!;
  await waitFor(async () => (await db.selectFrom('payment_policies').select('address').where('address', '=', policy).executeTakeFirst()) ?? false, 20_000, 'the policy in the read model');
  await syncGatewayStates(db, s.io);
  const claimed = await waitFor(async () => {
    await enqueueDue(db, Math.floor(Date.now() / 1000));
    return (await claimIntents(db, 'dead', 100, 4000)).find((i) => i.policy === policy);
  }, 20_000, 'the due intent claimed');
  await new Promise((res) => setTimeout(res, 1500)); // the chain's clock, a slot behind ours, past the due date too
  const ctx = await readExecutionContext(s.io, policy);
  if ('class' in ctx) throw new Error(ctx.reason);
  const paidBefore = Number(ctx.policy.data['payment_count']);
  const signed = signExecution(s.io, ctx, s.signer, await latestBlockhash(s.io), null);
  expect(await markSending(db, claimed.id, 'dead', { ...signed, paymentCountBefore: paidBefore }), 'stored within the lease').to.equal(true);
  return { policy, claimed, signed, paidBefore };
}
