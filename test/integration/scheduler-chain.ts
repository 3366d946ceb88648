/**
 * What the scheduler's pause, milestone and catch-up tests do on the localnet as a payer
 * would: send an instruction signed by the payer, pause or resume a policy, create a
 * Milestone policy under the payer's user payment, read a policy's account.
 */
import BN from 'bn.js';
import { PublicKey, Transaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { EventData } from '../../src/kernel/events/codec.js';
import { trackingIdToMemo } from '../../src/kernel/domain/memo.js';

export async function sendAs(rpc: RpcClient, payer: Keypair, ix: TransactionInstruction): Promise<string> {
  const { value } = await rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash }).add(ix);
  tx.sign(payer);
  return rpc.call<string>('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
}

export async function accountOf(rpc: RpcClient, address: string, kind = 'PaymentPolicy'): Promise<EventData> {
  const acc = await readProgramAccount(rpc, address, kind, { programId: PROGRAM_ID, commitment: 'confirmed' });
  if (acc.kind !== 'found') throw new Error(`no ${kind} at ${address}`);
  return acc.data;
}

/** change_payment_policy_status by the policy's owner */
export async function setPolicyStatus(rpc: RpcClient, payer: Keypair, policy: string, mint: string, status: 'Paused' | 'Active'): Promise<string> {
  const policyId = Number((await accountOf(rpc, policy))['policy_id']);
  const mintKey = new PublicKey(mint);
  return sendAs(rpc, payer, tributaryIx('change_payment_policy_status', {
    owner: payer.publicKey, user_payment: pdas.userPayment(payer.publicKey, mintKey), token_mint: mintKey,
    payment_policy: new PublicKey(policy), config: pdas.config(),
  }, { policy_id: policyId, new_status: { [status]: {} } }));
}

/** A Milestone policy of the payer's user payment (which must exist) at the gateway; answers its address. */
export async function createMilestone(
  rpc: RpcClient, payer: Keypair, m: { mint: string; gateway: string; recipient: string; amounts: bigint[]; timestamps: number[]; releaseCondition: number; trackingId?: string },
): Promise<string> {
  const mint = new PublicKey(m.mint);
  const userPayment = pdas.userPayment(payer.publicKey, mint);
  const count = Number((await accountOf(rpc, userPayment.toBase58(), 'UserPayment'))['created_policies_count']);
  const policy = pdas.paymentPolicy(userPayment, count + 1);
  const four = <T>(xs: T[], fill: T): T[] => [0, 1, 2, 3].map((k) => xs[k] ?? fill);
  await sendAs(rpc, payer, tributaryIx('create_payment_policy', {
    user: payer.publicKey, user_payment: userPayment, recipient: new PublicKey(m.recipient), token_mint: mint,
    gateway: new PublicKey(m.gateway), config: pdas.config(), payment_policy: policy, fee_payer: payer.publicKey,
  }, {
    policy_type: {
      Milestone: {
        milestone_amounts: four(m.amounts, 0n).map((a) => new BN(a.toString())),
        milestone_timestamps: four(m.timestamps, m.timestamps.at(-1) ?? 0).map((t) => new BN(t)),
        current_milestone: 0, release_condition: m.releaseCondition, total_milestones: m.amounts.length,
        escrow_amount: new BN(m.amounts.reduce((a, b) => a + b, 0n).toString()), padding: new Array(53).fill(0),
      },
    },
    memo: [...(trackingIdToMemo(m.trackingId ?? '', 64) ?? Buffer.alloc(64))],
  }));
  return policy.toBase58();
}
