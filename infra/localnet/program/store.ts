/**
 * The account store of the emulated cluster, and the overlay through which a transaction
 * writes: a transaction's writes become visible only when it commits, so a failing
 * instruction leaves no trace (as on Solana, where a failed transaction only pays fees).
 */
import type { PublicKey } from '@solana/web3.js';
import { PROGRAM_ID, SYSTEM_PROGRAM_ID } from '../constants.js';
import { decodeAccount, encodeAccount, rentExempt } from './encoding.js';
import type { AccountKind, AccountTypes } from './model.js';
import { keyString } from '../keys.js';

const SYSTEM_PROGRAM = keyString(SYSTEM_PROGRAM_ID);

export interface StoredAccount {
  lamports: number;
  owner: string;
  executable: boolean;
  data: Buffer;
}

export interface AccountView {
  get(address: string): StoredAccount | undefined;
  set(address: string, account: StoredAccount | null): void;
}

export interface AccountStore extends AccountView {
  entries(): IterableIterator<[string, StoredAccount]>;
  size(): number;
}

export interface Overlay extends AccountView {
  commit(): void;
}

export function createStore(): AccountStore {
  const accounts = new Map<string, StoredAccount>();
  return {
    get: (a) => accounts.get(a),
    set: (a, acc) => (acc ? accounts.set(a, acc) : accounts.delete(a)),
    entries: () => accounts.entries(),
    size: () => accounts.size,
  };
}

export function createOverlay(base: AccountView): Overlay {
  const writes = new Map<string, StoredAccount | null>();
  return {
    get: (a) => (writes.has(a) ? (writes.get(a) ?? undefined) : base.get(a)),
    set: (a, acc) => void writes.set(a, acc),
    commit: () => {
      for (const [a, acc] of writes) base.set(a, acc);
      writes.clear();
    },
  };
}

export function readProgramAccount<K extends AccountKind>(
  view: AccountView, address: PublicKey, kind: K,
): AccountTypes[K] | undefined {
  const acc = view.get(keyString(address));
  if (!acc || acc.owner !== keyString(PROGRAM_ID)) return undefined;
  return decodeAccount(kind, acc.data);
}

export function writeProgramAccount<K extends AccountKind>(
  view: AccountView, address: PublicKey, kind: K, value: AccountTypes[K],
): void {
  const data = encodeAccount(kind, value);
  const prior = view.get(keyString(address));
  view.set(keyString(address), {
    lamports: prior?.lamports ?? rentExempt(data.length),
    owner: keyString(PROGRAM_ID),
    executable: false,
    data,
  });
}

/** Closes an account, its lamports (the rent) going to `destination`, as Anchor's close does. */
export function closeAccount(view: AccountView, address: PublicKey, destination: PublicKey): void {
  const closed = view.get(keyString(address));
  const dest = view.get(keyString(destination));
  if (closed && closed.lamports > 0) {
    view.set(keyString(destination), dest
      ? { ...dest, lamports: dest.lamports + closed.lamports }
      : { lamports: closed.lamports, owner: SYSTEM_PROGRAM, executable: false, data: Buffer.alloc(0) });
  }
  view.set(keyString(address), null);
}
