/**
 * readExecutionContext (chain.ts) for many executions at once, in as few round trips as
 * the RPC allows: the accounts of up to 100 policies per getMultipleAccounts (each gateway
 * and the config read once). Sends and confirmations in batches are the sender's
 * (infra/solana/sender.ts: sendMany, confirmMany).
 */
import { text } from '../../src/kernel/domain/event-data.js';
import { readProgramAccounts, type AccountRead } from '../../infra/solana/accounts.js';
import type { ChainIo, ExecutionContext } from './chain.js';
import { failure, type Failure } from './failure.js';

const ACCOUNTS_PER_CALL = 100;

type Found = AccountRead & { kind: 'found' };
const isFound = (r: AccountRead | undefined): r is Found => r?.kind === 'found';

async function readMany(io: ChainIo, addresses: readonly string[], kind: string): Promise<Map<string, AccountRead>> {
  const opts = { programId: io.programId, commitment: io.commitment };
  const unique = [...new Set(addresses)];
  const out = new Map<string, AccountRead>();
  for (let i = 0; i < unique.length; i += ACCOUNTS_PER_CALL) {
    const slice = unique.slice(i, i + ACCOUNTS_PER_CALL);
    const reads = await readProgramAccounts(io.rpc, slice, kind, opts);
    slice.forEach((a, k) => { const r = reads[k]; if (r) out.set(a, r); });
  }
  return out;
}

/** readExecutionContext for every policy, in the order given. */
export async function readExecutionContexts(io: ChainIo, policies: readonly string[]): Promise<(ExecutionContext | Failure)[]> {
  const ps = await readMany(io, policies, 'PaymentPolicy');
  const found = policies.map((a) => ps.get(a)).filter(isFound);
  const [ups, gws, cfg] = await Promise.all([
    readMany(io, found.map((p) => text(p.data, 'user_payment')), 'UserPayment'),
    readMany(io, found.map((p) => text(p.data, 'gateway')), 'PaymentGateway'),
    readMany(io, [io.pdas.config()], 'ProgramConfig'),
  ]);
  const config = cfg.get(io.pdas.config());
  return policies.map((a) => {
    const policy = ps.get(a);
    if (!isFound(policy)) return failure('PolicyNotFound', `no payment policy at ${a} (deleted)`);
    const userPayment = ups.get(text(policy.data, 'user_payment'));
    const gateway = gws.get(text(policy.data, 'gateway'));
    if (!isFound(userPayment)) return failure('PolicyNotFound', `the policy's user payment ${text(policy.data, 'user_payment')} is gone`);
    if (!isFound(gateway)) return failure('PolicyNotFound', `the policy's gateway ${text(policy.data, 'gateway')} is gone`);
    if (!isFound(config)) return failure('failed', 'the program config account is missing');
    return { policy, userPayment, gateway, config };
  });
}
