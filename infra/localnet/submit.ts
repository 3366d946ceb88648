/**
 * Landing a transaction on the emulated cluster: the checks the bank makes before
 * executing (signatures, blockhash, duplicates, fee payer), execution, and on success or
 * program failure the record that getTransaction, getSignaturesForAddress and the
 * subscriptions then see. The same path serves the workload and sendTransaction.
 */
import type { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { normalizeIdlValue } from '../../src/kernel/events/codec.js';
import { eventId, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { isEventName } from '../../src/kernel/events/catalog.js';
import type { Chain, TokenBalance, TxRecord } from './chain.js';
import { createOverlay, type AccountView } from './program/store.js';
import { readMint, readTokenAccount, uiTokenAmount } from './spl.js';
import { readComputeBudget, transactionFee } from './compute-budget.js';
import { executeMessage, type ExecOptions, type ExecResult } from './executor.js';
import { isTokenProgram } from './token-program.js';
import { decodeEventBody } from './program/encoding.js';
import { verifyTransaction } from './signatures.js';
import { keyString } from './keys.js';

export type Rejection =
  | 'SignatureFailure' | 'BlockhashNotFound' | 'AlreadyProcessed' | 'AccountNotFound' | 'InsufficientFundsForFee' | 'UnsupportedVersion'
  /** a Compute Budget instruction unreadable or given twice: the transaction never runs, nor pays */
  | 'InvalidComputeBudget';

export type SubmitOutcome =
  | { kind: 'rejected'; reason: Rejection }
  | { kind: 'executed'; result: ExecResult; record?: TxRecord };

export interface SubmitOptions {
  verifySignatures: boolean;
  /** false for preflight and simulation: execute, report, keep nothing */
  commit: boolean;
  /** simulateTransaction's replaceRecentBlockhash */
  ignoreBlockhash?: boolean;
  exec?: Partial<ExecOptions>;
}

export function submitTransaction(chain: Chain, tx: VersionedTransaction, opts: SubmitOptions): SubmitOutcome {
  const message = tx.message;
  if (message.version !== 'legacy' && message.addressTableLookups.length > 0) return { kind: 'rejected', reason: 'UnsupportedVersion' };
  if (opts.verifySignatures && !verifyTransaction(tx)) return { kind: 'rejected', reason: 'SignatureFailure' };
  if (!opts.ignoreBlockhash && chain.blockhashSlot(message.recentBlockhash) === undefined) return { kind: 'rejected', reason: 'BlockhashNotFound' };
  const signature = bs58.encode(tx.signatures[0] ?? new Uint8Array(64));
  if (opts.commit && chain.transaction(signature)) return { kind: 'rejected', reason: 'AlreadyProcessed' };
  const keys = message.staticAccountKeys.map(keyString);
  const feePayer = keys[0] ?? '';
  const budget = readComputeBudget(message);
  if ('err' in budget) {
    if (opts.commit) return { kind: 'rejected', reason: 'InvalidComputeBudget' };
    return { kind: 'executed', result: { err: budget.err, logs: [], innerInstructions: [], events: [], unitsConsumed: 0, overlay: createOverlay(chain.store) } };
  }
  const fee = transactionFee(message, budget.budget);
  const payer = chain.store.get(feePayer);
  if (!payer) return { kind: 'rejected', reason: 'AccountNotFound' };
  if (payer.lamports < fee) return { kind: 'rejected', reason: 'InsufficientFundsForFee' };

  const now = chain.blockTime();
  const result = executeMessage(chain.store, message, {
    clock: opts.exec?.clock ?? { now, scheduleNow: now },
    ...(opts.exec?.viaCpi ? { viaCpi: opts.exec.viaCpi } : {}),
    unitLimit: budget.budget.unitLimit,
  });
  if (!opts.commit) return { kind: 'executed', result };

  const preBalances = keys.map((k) => chain.store.get(k)?.lamports ?? 0);
  const preTokenBalances = tokenBalances(chain.store, keys);
  if (result.err === null) result.overlay.commit();
  const payerNow = chain.store.get(feePayer);
  if (payerNow) chain.store.set(feePayer, { ...payerNow, lamports: payerNow.lamports - fee });
  const slot = chain.slot();
  const blockTime = chain.blockTime(slot);
  let wire: Buffer | undefined;
  const record: TxRecord = {
    // the first signature is the transaction's, already in base58 (each encode is a quadratic base conversion)
    seq: chain.nextSeq(), signature, signatures: tx.signatures.map((s, i) => (i === 0 ? signature : bs58.encode(s))), slot, blockTime,
    version: message.version === 'legacy' ? 'legacy' : 0, message, wire: () => (wire ??= Buffer.from(tx.serialize())), accountKeys: keys, err: result.err,
    logs: result.logs, innerInstructions: result.innerInstructions, fee, preBalances, preTokenBalances,
    postTokenBalances: tokenBalances(chain.store, keys),
    postBalances: keys.map((k) => chain.store.get(k)?.lamports ?? 0), unitsConsumed: result.unitsConsumed,
    events: result.err === null ? result.events.map((e) => toEnvelope(e, signature, slot, blockTime)) : [],
  };
  chain.append(record);
  return { kind: 'executed', result, record };
}

function toEnvelope(
  e: { name: string; payload: Buffer; ixPath: string; index: number; observed?: Record<string, unknown> }, signature: string, slot: number, blockTime: number,
): TributaryEvent {
  if (!isEventName(e.name)) throw new Error(`program emitted an event missing from the catalog: ${e.name}`);
  return {
    id: eventId(signature, e.ixPath, e.index), name: e.name, signature, slot, blockTime, ixPath: e.ixPath,
    index: e.index, data: { ...normalizeIdlValue(e.name, decodeEventBody(e.name, e.payload)), ...e.observed },
  } as TributaryEvent; // normalizeIdlValue produces the generated shape of each event (event-types.ts)
}

/** The token accounts among a transaction's keys with their balances, as a node records them. */
function tokenBalances(store: AccountView, keys: readonly string[]): TokenBalance[] {
  const out: TokenBalance[] = [];
  keys.forEach((k, accountIndex) => {
    const acc = store.get(k);
    if (!acc || !isTokenProgram(acc.owner)) return;
    const t = readTokenAccount(acc.data);
    const mintKey = t?.mint.toBase58();
    const mint = mintKey === undefined ? undefined : store.get(mintKey);
    const decimals = mint ? readMint(mint.data)?.decimals : undefined;
    if (!t || mintKey === undefined || decimals === undefined) return;
    out.push({ accountIndex, mint: mintKey, owner: t.owner.toBase58(), programId: acc.owner, uiTokenAmount: uiTokenAmount(t.amount, decimals) });
  });
  return out;
}
