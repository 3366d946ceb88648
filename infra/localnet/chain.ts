/**
 * The emulated cluster's ledger: slots advancing every 400 ms with real unix block
 * times, recent blockhashes, the account store, every transaction in order, an index of
 * transactions by the addresses they mention (for getSignaturesForAddress and
 * logsSubscribe), and the decoded events the program emitted (the test oracle).
 */
import type { VersionedMessage } from '@solana/web3.js';
import bs58 from 'bs58';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { BLOCKHASH_VALIDITY, FINALITY_DEPTH } from './constants.js';
import type { InnerInstructions, TransactionError } from './executor.js';
import { deriveHash } from './keys.js';
import { createStore, type AccountStore } from './program/store.js';

export interface TokenBalance {
  accountIndex: number; mint: string; owner: string; programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number; uiAmountString: string };
}

export interface TxRecord {
  /** global order of execution */
  seq: number;
  signature: string;
  signatures: string[];
  slot: number;
  blockTime: number;
  version: 'legacy' | 0;
  message: VersionedMessage;
  /**
   * the wire bytes, for encoding=base64 and base58: serialized when first asked for, then
   * kept (the indexer reads encoding=json, so most transactions are never asked)
   */
  wire(): Buffer;
  accountKeys: string[];
  err: TransactionError | null;
  logs: string[];
  innerInstructions: InnerInstructions[];
  fee: number;
  preBalances: number[];
  /** the transaction's token accounts before and after, as meta.pre/postTokenBalances show them */
  preTokenBalances?: TokenBalance[];
  postTokenBalances?: TokenBalance[];
  postBalances: number[];
  unitsConsumed: number;
  events: TributaryEvent[];
}

export interface Chain {
  readonly seed: string;
  readonly store: AccountStore;
  slot(): number;
  blockTime(slot?: number): number;
  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number };
  /** the slot a blockhash was produced in, while it is still valid */
  blockhashSlot(hash: string): number | undefined;
  advanceSlot(): void;
  append(tx: TxRecord): void;
  transaction(signature: string): TxRecord | undefined;
  /** transactions mentioning an address, oldest first */
  mentioning(address: string): readonly TxRecord[];
  transactions(): readonly TxRecord[];
  ledger(): readonly TributaryEvent[];
  commitmentOf(slot: number): 'confirmed' | 'finalized';
  nextSeq(): number;
  onTransaction(listener: (tx: TxRecord) => void): () => void;
  onSlot(listener: (slot: number) => void): () => void;
}

export function createChain(seed: string, nowMs: () => number = Date.now): Chain {
  let slot = 1;
  let seq = 0;
  const blockTimes = new Map<number, number>();
  const hashes = new Map<string, number>();
  const hashBySlot = new Map<number, string>();
  const txs = new Map<string, TxRecord>();
  const all: TxRecord[] = [];
  const byAddress = new Map<string, TxRecord[]>();
  const events: TributaryEvent[] = [];
  const txListeners = new Set<(tx: TxRecord) => void>();
  const slotListeners = new Set<(slot: number) => void>();
  const store = createStore();

  const produce = (s: number): void => {
    blockTimes.set(s, Math.floor(nowMs() / 1000));
    const hash = bs58.encode(deriveHash(seed, `blockhash:${s}`));
    hashes.set(hash, s);
    hashBySlot.set(s, hash);
    const expired = hashBySlot.get(s - BLOCKHASH_VALIDITY - 1);
    if (expired) {
      hashes.delete(expired);
      hashBySlot.delete(s - BLOCKHASH_VALIDITY - 1);
    }
  };
  produce(slot);

  return {
    seed,
    store,
    slot: () => slot,
    blockTime: (s = slot) => blockTimes.get(s) ?? Math.floor(nowMs() / 1000),
    latestBlockhash: () => ({ blockhash: hashBySlot.get(slot) ?? '', lastValidBlockHeight: slot + BLOCKHASH_VALIDITY }),
    blockhashSlot: (hash) => hashes.get(hash),
    advanceSlot: () => {
      slot += 1;
      produce(slot);
      for (const l of slotListeners) l(slot);
    },
    append: (tx) => {
      txs.set(tx.signature, tx);
      all.push(tx);
      for (const key of new Set(tx.accountKeys)) {
        const list = byAddress.get(key) ?? [];
        list.push(tx);
        byAddress.set(key, list);
      }
      events.push(...tx.events);
      for (const l of txListeners) l(tx);
    },
    transaction: (sig) => txs.get(sig),
    mentioning: (address) => byAddress.get(address) ?? [],
    transactions: () => all,
    ledger: () => events,
    commitmentOf: (s) => (s <= slot - FINALITY_DEPTH ? 'finalized' : 'confirmed'),
    nextSeq: () => (seq += 1),
    onTransaction: (l) => {
      txListeners.add(l);
      return () => txListeners.delete(l);
    },
    onSlot: (l) => {
      slotListeners.add(l);
      return () => slotListeners.delete(l);
    },
  };
}
