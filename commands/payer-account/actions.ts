/**
 * The unsigned transactions a payer's wallet signs to act on its own subscriptions: pause
 * and resume (the program's change_payment_policy_status), cancel (delete_payment_policy:
 * the account is closed, its rent goes back) and revoke (the SPL token program's Revoke of
 * the delegation the program charges through). The program lets only the policy's owner
 * sign the first two (PROGRAM.md), so the wallet is the fee payer and the one signer; the
 * service signs nothing. Each answer names what it does, for a wallet to show.
 */
import { PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import type { Db } from '../../infra/postgres/database.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { RpcResponseError, RpcUnavailableError } from '../../infra/solana/rpc-client.js';
import { programInstruction } from '../../infra/solana/instructions.js';
import { associatedTokenAddress, revokeIx } from '../../src/kernel/domain/spl-token.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import { conflict, forbidden, invalid, notFound, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { PolicyAction, UnsignedTransaction } from '../../src/kernel/wire/answers/payer.js';

// the answer's shape and the actions are the wire module's, which the account page reads as well
export type { PolicyAction, UnsignedTransaction } from '../../src/kernel/wire/answers/payer.js';
export const POLICY_ACTIONS: readonly PolicyAction[] = ['pause', 'resume', 'cancel'];

export interface ActionDeps {
  db: Db;
  rpc: RpcClient;
  pdas: PdaDeriver;
  commitment: string;
}

async function latestBlockhash(deps: ActionDeps): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
  try {
    const r = await deps.rpc.call<{ value: { blockhash: string; lastValidBlockHeight: number } }>('getLatestBlockhash', [{ commitment: deps.commitment }]);
    return r.value;
  } catch (err) {
    if (err instanceof RpcResponseError || err instanceof RpcUnavailableError) throw upstreamUnavailable('the chain did not give a recent blockhash; try again');
    throw err;
  }
}

async function unsigned(deps: ActionDeps, wallet: string, ix: TransactionInstruction, instruction: string, summary: string): Promise<UnsignedTransaction> {
  const { blockhash, lastValidBlockHeight } = await latestBlockhash(deps);
  const tx = new Transaction({ feePayer: new PublicKey(wallet), blockhash, lastValidBlockHeight }).add(ix);
  const transaction = tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64');
  return { transaction, instruction, blockhash, lastValidBlockHeight, summary };
}

/** The wallet's payment policy as the read model has it; 404 unknown or deleted, 403 another wallet's. */
async function ownPolicy(deps: ActionDeps, wallet: string, address: string) {
  if (!isPublicKey(address)) throw invalid('address must be a base58 public key');
  const row = await deps.db.selectFrom('payment_policies')
    .select(['address', 'policy_id', 'user_payment', 'owner', 'token_mint', 'status', 'deleted'])
    .where('address', '=', address).executeTakeFirst();
  if (!row || row.deleted) throw notFound(`no payment policy ${address} (never created, or deleted)`);
  if (row.owner !== wallet || row.token_mint === null) throw forbidden(`the policy ${address} is not ${wallet}'s`);
  return { ...row, token_mint: row.token_mint, policyId: Number(row.policy_id) };
}

export async function buildPolicyAction(deps: ActionDeps, wallet: string, address: string, action: PolicyAction): Promise<UnsignedTransaction> {
  const p = await ownPolicy(deps, wallet, address);
  const accounts = { owner: wallet, user_payment: p.user_payment, token_mint: p.token_mint, payment_policy: p.address, config: deps.pdas.config() };
  if (action === 'cancel') {
    const ix = programInstruction(deps.pdas.programId, 'delete_payment_policy', { ...accounts, rent_payer: wallet }, { policy_id: p.policyId });
    return unsigned(deps, wallet, ix, 'delete_payment_policy', `cancel: delete the payment policy ${p.address}; no further charges, its rent returns`);
  }
  const [from, to] = action === 'pause' ? ['Active', 'Paused'] : ['Paused', 'Active'];
  if (p.status !== from) throw conflict(`the policy is ${p.status}; only an ${from} policy can be ${action === 'pause' ? 'paused' : 'resumed'}`);
  const ix = programInstruction(deps.pdas.programId, 'change_payment_policy_status', accounts, { policy_id: p.policyId, new_status: { [to]: {} } });
  return unsigned(deps, wallet, ix, 'change_payment_policy_status', `${action}: set the payment policy ${p.address} ${to}`);
}

/** Revoke of the delegation on the wallet's token account (its associated account of `mint`, or the one named). */
export async function buildRevoke(deps: ActionDeps, wallet: string, input: { mint?: string; tokenAccount?: string }): Promise<UnsignedTransaction> {
  const source = input.tokenAccount ?? (input.mint !== undefined ? associatedTokenAddress(wallet, input.mint) : undefined);
  if (source === undefined) throw invalid('name the mint (its associated token account is revoked) or the tokenAccount');
  return unsigned(deps, wallet, revokeIx(source, wallet), 'revoke', `revoke: remove every delegate's allowance on the token account ${source}`);
}
