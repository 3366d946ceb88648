/**
 * The one way the service puts a transaction on the chain and learns its fate: send (with
 * preflight), status, confirm (poll until the commitment or a timeout), and the
 * resolution of a transaction left in doubt. Every function answers a result; none throws
 * for what the node said or did not say.
 *
 * The contract a caller builds on: the bytes are signed and stored before the first send,
 * and the same bytes are one signature, which the chain lands at most once. A transaction
 * is proven never to land only when its blockhash has expired (read first: once expired at
 * the commitment, every bank that could hold it is at or below that one, so the status read
 * next is final), it has no status even with the history searched, and the accounts it
 * would have changed are unchanged (the caller's check). Anything short of that is in doubt.
 */
import type { Commitment } from './chain-reader.js';
import { classifyRpcError, nameOfTxError, type RpcErrorClass } from './rpc-error-class.js';
import { RpcResponseError, RpcUnavailableError, type RpcClient } from './rpc-client.js';

export interface SenderIo { rpc: RpcClient; commitment: Commitment }

/** A program's refusal, at preflight or on chain: the error's name, the transaction error and its logs. */
export interface Refusal { name: string; err: unknown; logs: readonly string[]; message: string }

export type SendResult =
  | { kind: 'sent' }
  /** preflight ran the program and it refused: this send landed nothing */
  | { kind: 'refused'; refusal: Refusal }
  /** the node did not take these bytes, or may have: an earlier or this send may still land */
  | { kind: 'in_doubt'; error: RpcErrorClass };

export const sendParams = (io: SenderIo, wire: string): unknown[] => [wire, { encoding: 'base64', preflightCommitment: io.commitment }];

/** What the node's error answer to a send means. */
export function sendResultOf(err: RpcResponseError | RpcUnavailableError): SendResult {
  const c = classifyRpcError(err);
  if (c.kind === 'already_processed') return { kind: 'sent' };
  if (c.kind === 'program_refusal') return { kind: 'refused', refusal: { name: c.name ?? 'unknown', err: c.err, logs: c.logs ?? [], message: c.message } };
  return { kind: 'in_doubt', error: c };
}

const isRpcError = (err: unknown): err is RpcResponseError | RpcUnavailableError => err instanceof RpcResponseError || err instanceof RpcUnavailableError;

export async function send(io: SenderIo, wire: string): Promise<SendResult> {
  try {
    await io.rpc.call<string>('sendTransaction', sendParams(io, wire));
    return { kind: 'sent' };
  } catch (err) {
    if (isRpcError(err)) return sendResultOf(err);
    throw err;
  }
}

/** send for every wire in one JSON-RPC batch. */
export async function sendMany(io: SenderIo, wires: readonly string[]): Promise<SendResult[]> {
  try {
    const replies = await io.rpc.batch<string>('sendTransaction', wires.map((w) => sendParams(io, w)));
    return replies.map((r) => (r instanceof RpcResponseError ? sendResultOf(r) : { kind: 'sent' }));
  } catch (err) {
    if (isRpcError(err)) { const r = sendResultOf(err); return wires.map(() => r); }
    throw err;
  }
}

export type SignatureFate =
  | { kind: 'landed'; slot: number }
  | { kind: 'failed'; refusal: Refusal }
  /** seen below the commitment: it may still confirm, or be dropped with its fork */
  | { kind: 'pending' }
  /** no status at all */
  | { kind: 'unseen' }
  | { kind: 'no_answer'; reason: string };

type RawStatus = { slot: number; err: unknown; confirmationStatus?: Commitment | null } | null | undefined;

const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };
const STATUSES_PER_CALL = 256;

function fateOf(io: SenderIo, s: RawStatus): SignatureFate {
  if (!s) return { kind: 'unseen' };
  if (s.err) return { kind: 'failed', refusal: { name: nameOfTxError(s.err), err: s.err, logs: [], message: JSON.stringify(s.err) } };
  if (s.confirmationStatus && RANK[s.confirmationStatus] >= RANK[io.commitment]) return { kind: 'landed', slot: s.slot };
  return { kind: 'pending' };
}

/**
 * A status carries the transaction's error only. An error that means something else by the
 * account it failed on, Anchor's raw constraint (execute_payment's `!config.emergency_pause`
 * among others), names that account only in the program's log (`AnchorError caused by
 * account: config. Error Code: ConstraintRaw.`): its logs are read from the transaction. Without
 * them (a node that kept no history, or no answer) the refusal stays as the status gave it.
 */
const READ_LOGS = new Set(['ConstraintRaw']);

async function withLogs(io: SenderIo, signature: string, fate: SignatureFate): Promise<SignatureFate> {
  if (fate.kind !== 'failed' || !READ_LOGS.has(fate.refusal.name)) return fate;
  try {
    const tx = await io.rpc.call<{ meta?: { logMessages?: unknown } } | null>('getTransaction', [
      signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: io.commitment === 'finalized' ? 'finalized' : 'confirmed' },
    ]);
    const logs = tx?.meta?.logMessages;
    if (!Array.isArray(logs)) return fate;
    return { kind: 'failed', refusal: { ...fate.refusal, logs: logs.filter((l): l is string => typeof l === 'string') } };
  } catch (err) {
    if (!isRpcError(err)) throw err;
    return fate;
  }
}

/** What the chain knows of each signature at the commitment; `history` searches past the node's recent status cache. */
export async function statuses(io: SenderIo, signatures: readonly string[], opts: { history: boolean }): Promise<SignatureFate[]> {
  const out: SignatureFate[] = [];
  for (let i = 0; i < signatures.length; i += STATUSES_PER_CALL) {
    const slice = signatures.slice(i, i + STATUSES_PER_CALL);
    try {
      const r = await io.rpc.call<{ value: RawStatus[] }>('getSignatureStatuses', [slice, { searchTransactionHistory: opts.history }]);
      for (const [k, signature] of slice.entries()) out.push(await withLogs(io, signature, fateOf(io, r.value[k])));
    } catch (err) {
      if (!isRpcError(err)) throw err;
      slice.forEach(() => out.push({ kind: 'no_answer', reason: err.message }));
    }
  }
  return out;
}

export async function status(io: SenderIo, signature: string, opts: { history: boolean }): Promise<SignatureFate> {
  const [fate] = await statuses(io, [signature], opts);
  return fate ?? { kind: 'unseen' };
}

export interface ConfirmOptions { timeoutMs: number; history?: boolean; sleep?: (ms: number) => Promise<void> }

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const settled = (f: SignatureFate): boolean => f.kind === 'landed' || f.kind === 'failed';

/** Polls until every signature landed or failed, or the timeout passes (the rest keep their last fate). */
export async function confirmMany(io: SenderIo, signatures: readonly string[], opts: ConfirmOptions): Promise<Map<string, SignatureFate>> {
  const sleep = opts.sleep ?? defaultSleep;
  const fates = new Map<string, SignatureFate>(signatures.map((s) => [s, { kind: 'unseen' }]));
  const deadline = Date.now() + opts.timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const open = signatures.filter((s) => !settled(fates.get(s) ?? { kind: 'unseen' }));
    if (open.length === 0) break;
    const seen = await statuses(io, open, { history: opts.history ?? true });
    open.forEach((s, k) => fates.set(s, seen[k] ?? { kind: 'unseen' }));
    if (Date.now() >= deadline || open.every((s) => settled(fates.get(s) ?? { kind: 'unseen' }))) break;
    await sleep(delay);
  }
  return fates;
}

export async function confirm(io: SenderIo, signature: string, opts: ConfirmOptions): Promise<SignatureFate> {
  return (await confirmMany(io, [signature], opts)).get(signature) ?? { kind: 'unseen' };
}

/** Whether the node still accepts the blockhash at the commitment (confirmed at least); undefined without an answer. */
export async function blockhashValid(io: SenderIo, blockhash: string): Promise<boolean | undefined> {
  try {
    const r = await io.rpc.call<{ value: boolean }>('isBlockhashValid', [blockhash, { commitment: io.commitment === 'finalized' ? 'finalized' : 'confirmed' }]);
    return r.value;
  } catch (err) {
    if (isRpcError(err)) return undefined;
    throw err;
  }
}

export type InDoubtVerdict =
  | { kind: 'landed'; slot: number }
  | { kind: 'failed'; refusal: Refusal }
  /** not landed, and its blockhash still valid: the same bytes may be sent again */
  | { kind: 'can_land' }
  /** proven: blockhash expired, no status with the history searched, the accounts unchanged */
  | { kind: 'cannot_land' }
  /** blockhash expired and no status, but the accounts moved: it landed (its status pruned) or another payment did */
  | { kind: 'moved' }
  | { kind: 'in_doubt'; reason: string };

/**
 * The fate of stored bytes whose send may or may not have reached a leader. `unchanged`
 * reads the accounts the transaction would change and says whether they are as stored
 * when it was signed (undefined: not known now); it is asked only once the blockhash has
 * expired and no status exists.
 */
export async function resolveInDoubt(
  io: SenderIo, tx: { signature: string; blockhash: string | null }, unchanged: () => Promise<boolean | undefined>,
): Promise<InDoubtVerdict> {
  const canLand = tx.blockhash ? await blockhashValid(io, tx.blockhash) : false;
  if (canLand === undefined) return { kind: 'in_doubt', reason: 'the node did not say whether the blockhash is valid' };
  const fate = await status(io, tx.signature, { history: true });
  if (fate.kind === 'landed' || fate.kind === 'failed') return fate;
  if (fate.kind === 'no_answer') return { kind: 'in_doubt', reason: fate.reason };
  if (canLand) return { kind: 'can_land' };
  if (fate.kind === 'pending') return { kind: 'in_doubt', reason: 'processed below the commitment' };
  const same = await unchanged();
  if (same === undefined) return { kind: 'in_doubt', reason: 'the accounts it would change could not be read' };
  return same ? { kind: 'cannot_land' } : { kind: 'moved' };
}
