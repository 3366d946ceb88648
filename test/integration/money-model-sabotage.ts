/**
 * Wrongs done behind the service's back, so the money model's checks are seen to fail:
 * a pay-as-you-go policy charged once more by a duplicate execute_payment signed with the
 * gateway's signer (another compute limit makes it its own transaction), and a metered
 * chunk of another charge erased from the ledger.
 */
import { ComputeBudgetProgram, Transaction } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { latestBlockhash, readExecutionContext, signExecution } from '../../commands/scheduler/chain.js';
import { waitFor } from '../support/process.js';
import { DEMO_PATH } from './x402-harness.js';
import { newPayer, type World } from './money-model-world.js';

/** Answers the policy charged twice. */
export async function doubleCharge(w: World): Promise<string> {
  const payer = newPayer(w);
  const paid = await payAndFetch(`${w.nodes[0]!}${DEMO_PATH}`, { wallet: payer.kp, rpcUrl: w.s.h.ln.rpcUrl, scheme: 'x402://payg' });
  const policy = paid.paid!.policy!;
  w.policies.push({ address: policy, kind: 'payg', payer, jwt: paid.paid!.jwt });
  for (let i = 0; i < 2; i += 1) await fetch(`${w.nodes[i]!}${DEMO_PATH}`, { headers: { authorization: `Bearer ${paid.paid!.jwt}` } });
  await waitFor(async () => w.s.records(policy).length >= 2, 30_000, 'the metered usage charged');
  const ctx = await readExecutionContext(w.s.io, policy);
  if ('class' in ctx) throw new Error(ctx.reason);
  const signed = signExecution(w.s.io, ctx, w.s.signer, await latestBlockhash(w.s.io), BigInt(w.terms.price));
  const tx = Transaction.from(Buffer.from(signed.wire, 'base64'));
  tx.instructions[0] = ComputeBudgetProgram.setComputeUnitLimit({ units: 250_011 });
  tx.signatures = [];
  tx.sign(w.s.signer);
  const before = w.s.records(policy).length;
  await w.s.io.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64', preflightCommitment: 'confirmed' }]);
  await waitFor(async () => w.s.records(policy).length === before + 1, 20_000, 'the duplicate landed');
  return policy;
}

/** Deletes one charged chunk of `policy` from the ledger. */
export async function eraseChunk(w: World, policy: string): Promise<void> {
  const db = w.s.h.env.db;
  const row = await db.selectFrom('payg_usage').select('request_id').where('policy', '=', policy).where('charge_id', 'is not', null).executeTakeFirstOrThrow();
  await db.deleteFrom('payg_usage').where('request_id', '=', row.request_id).execute();
}
