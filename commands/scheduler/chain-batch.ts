/**
 * The chain.ts steps for many executions at once, in as few round trips as the RPC
 * allows: the accounts of up to 100 policies per getMultipleAccounts (each gateway and
 * the config read once), sends as one JSON-RPC batch, and confirmations of up to 256
 * signatures per getSignatureStatuses. Each result means what its single form means.
 */
import { text } from '../../src/kernel/domain/event-data.js';
import { readProgramAccounts, type AccountRead } from '../../infra/solana/accounts.js';
import { RpcResponseError, RpcUnavailableError } from '../../infra/solana/rpc-client.js';
import {
  fateOfStatus, refusedSend, sendParams, type ChainIo, type ExecutionContext, type SendResult, type SignatureFate, type SignatureStatus,
} from './chain.js';
import { failure, type Failure } from './failure.js';

const ACCOUNTS_PER_CALL = 100;
const STATUSES_PER_CALL = 256;

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

/** sendSigned for every wire in one JSON-RPC batch; no answer at all leaves each unknown. */
export async function sendSignedMany(io: ChainIo, wires: readonly string[]): Promise<SendResult[]> {
  try {
    const replies = await io.rpc.batch<string>('sendTransaction', wires.map((w) => sendParams(io, w)));
    return replies.map((r) => (r instanceof RpcResponseError ? refusedSend(r) : { ok: true }));
  } catch (err) {
    if (err instanceof RpcUnavailableError) return wires.map(() => ({ ok: false, unknown: true, reason: err.message }));
    if (err instanceof RpcResponseError) return wires.map(() => refusedSend(err));
    throw err;
  }
}

/** signatureFate of each signature. */
export async function signatureFates(io: ChainIo, signatures: readonly string[]): Promise<SignatureFate[]> {
  const out: SignatureFate[] = [];
  for (let i = 0; i < signatures.length; i += STATUSES_PER_CALL) {
    const slice = signatures.slice(i, i + STATUSES_PER_CALL);
    const r = await io.rpc.call<{ value: SignatureStatus[] }>('getSignatureStatuses', [slice, { searchTransactionHistory: true }]);
    slice.forEach((_, k) => out.push(fateOfStatus(io, r.value[k])));
  }
  return out;
}

/** Polls until every signature landed or failed, or `timeoutMs` passes (the rest stay unseen). */
export async function awaitSignatures(io: ChainIo, signatures: readonly string[], timeoutMs: number): Promise<Map<string, SignatureFate>> {
  const fates = new Map<string, SignatureFate>();
  const deadline = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const open = signatures.filter((s) => !fates.has(s));
    const seen = await signatureFates(io, open);
    open.forEach((s, k) => { const f = seen[k]; if (f && f.kind !== 'unseen') fates.set(s, f); });
    if (fates.size === signatures.length || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, delay));
  }
  for (const s of signatures) if (!fates.has(s)) fates.set(s, { kind: 'unseen' });
  return fates;
}
