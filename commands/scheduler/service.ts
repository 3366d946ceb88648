/**
 * POST/GET/DELETE /v1/gateway/{gateway}/scheduler behind the routes: delegation (a signer
 * keypair for the gateway and the unsigned change_gateway_signer transaction its
 * authority signs and sends), the gateway's scheduler state, and stopping it.
 */
import { PublicKey, Transaction } from '@solana/web3.js';
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { programInstruction } from '../../infra/solana/instructions.js';
import { RpcResponseError, RpcUnavailableError } from '../../infra/solana/rpc-client.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { notFound, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { latestBlockhash, solBalance, type ChainIo } from './chain.js';
import { failedByReason, readCounts } from './counts.js';
import { delegateGateway, findServedGateway, stopGateway } from './signers.js';


export interface SchedulerServiceDeps { db: Db; io: ChainIo; encryptionKey: Buffer | undefined; signerMinLamports: number }

async function onChain<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RpcUnavailableError || err instanceof RpcResponseError) throw upstreamUnavailable(`the chain did not answer ${what}: ${err.message}`);
    throw err;
  }
}

async function gatewayAccount(deps: SchedulerServiceDeps, gateway: string) {
  const acc = await onChain('getAccountInfo', () => readProgramAccount(deps.io.rpc, gateway, 'PaymentGateway', { programId: deps.io.programId, commitment: deps.io.commitment }));
  if (acc.kind !== 'found') throw notFound(`no payment gateway at ${gateway}`);
  return acc;
}

/** change_gateway_signer(new_signer) for the authority to sign (fee payer) and send; base64 of the unsigned transaction. */
export function changeSignerTransaction(io: ChainIo, authority: string, gateway: string, newSigner: string, blockhash: string): string {
  const ix = programInstruction(io.programId, 'change_gateway_signer', { authority, gateway, new_signer: newSigner, config: io.pdas.config() }, {});
  const tx = new Transaction({ feePayer: new PublicKey(authority), recentBlockhash: blockhash }).add(ix);
  return tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64');
}

export interface DelegationAnswer {
  gateway: string; authority: string; signer: string; state: string; transaction: string | null; message: string;
}

export async function delegate(deps: SchedulerServiceDeps, gateway: string): Promise<DelegationAnswer> {
  const acc = await gatewayAccount(deps, gateway);
  const authority = text(acc.data, 'authority');
  const served = await delegateGateway(deps.db, { gateway, authority, encryptionKey: deps.encryptionKey });
  if (text(acc.data, 'signer') === served.signer) {
    return { ...served, state: 'active', transaction: null, message: 'the chain already names this signer; the scheduler serves the gateway' };
  }
  const blockhash = await onChain('getLatestBlockhash', () => latestBlockhash(deps.io));
  return {
    ...served, transaction: changeSignerTransaction(deps.io, authority, gateway, served.signer, blockhash),
    message: `sign the transaction with the gateway authority ${authority} and send it; fund the signer with SOL for transaction fees. The scheduler serves the gateway once the chain names the signer.`,
  };
}

export interface SchedulerStatus {
  gateway: string; signer: string; state: string; signerError: string | null; signerLamports: number | null; lowBalance: boolean;
  due: number; pastDue: number; executed: number; failed: Record<string, number>; givenUp: number; unsettledUsage: string;
}

export async function schedulerStatus(deps: SchedulerServiceDeps, gateway: string): Promise<SchedulerStatus> {
  const g = await findServedGateway(deps.db, gateway);
  if (!g) throw notFound(`the scheduler does not serve gateway ${gateway}; POST to delegate`);
  const counts = await readCounts(deps.db, gateway);
  const n = (status: string) => counts.intents.get(status) ?? 0;
  const usage = await deps.db.selectFrom('payg_usage').select(sql<string | null>`sum(chunk)::text`.as('total'))
    .where('gateway', '=', gateway).where('charge_id', 'is', null).where('unbillable_reason', 'is', null).executeTakeFirst();
  let lamports: number | null = null;
  try { lamports = await solBalance(deps.io, g.signer); } catch { lamports = null; }
  return {
    gateway, signer: g.signer, state: g.state, signerError: g.signer_error ?? null, signerLamports: lamports, lowBalance: lamports !== null && lamports < deps.signerMinLamports,
    due: n('pending') + n('sending'), pastDue: n('past_due'), executed: n('executed'), givenUp: n('given_up'),
    failed: failedByReason(counts, (outcome) => outcome !== 'executed'), unsettledUsage: usage?.total ?? '0',
  };
}

export async function stop(deps: SchedulerServiceDeps, gateway: string): Promise<{ gateway: string; state: 'stopped' }> {
  if (!(await findServedGateway(deps.db, gateway))) throw notFound(`the scheduler does not serve gateway ${gateway}`);
  await stopGateway(deps.db, gateway);
  return { gateway, state: 'stopped' };
}
