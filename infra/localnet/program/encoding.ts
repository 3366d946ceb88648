/**
 * Account and event bytes exactly as the program writes them, through Anchor's own
 * BorshCoder and the IDL's discriminators. Accounts are zero-padded to their allocated
 * size (Anchor's InitSpace: options and enums at their largest), which is what
 * getProgramAccounts' dataSize filters match on.
 */
import { BorshCoder } from '@coral-xyz/anchor';
import { idl, idlAccounts, idlEvents } from '../../../src/kernel/idl/index.js';
import type { AccountKind, AccountTypes } from './model.js';

export const coder = new BorshCoder(idl);

const accountDisc = new Map(idlAccounts.map((a) => [a.name, Buffer.from(a.discriminator)]));
const eventDisc = new Map(idlEvents.map((e) => [e.name, Buffer.from(e.discriminator)]));

export function accountSize(kind: AccountKind): number {
  return coder.accounts.size(kind);
}

export function encodeAccount<K extends AccountKind>(kind: K, value: AccountTypes[K]): Buffer {
  const disc = accountDisc.get(kind);
  if (!disc) throw new Error(`IDL has no account ${kind}`);
  const out = Buffer.alloc(accountSize(kind));
  disc.copy(out, 0);
  coder.types.encode(kind, value).copy(out, disc.length);
  return out;
}

/** Decodes into fresh objects, so callers may change them without touching the store. */
export function decodeAccount<K extends AccountKind>(kind: K, data: Buffer): AccountTypes[K] | undefined {
  const disc = accountDisc.get(kind);
  if (!disc || data.length < disc.length || !data.subarray(0, disc.length).equals(disc)) return undefined;
  return coder.types.decode<AccountTypes[K]>(kind, data.subarray(disc.length));
}

/** discriminator ++ borsh(body): the payload of a `Program data:` line or of a self-CPI. */
export function encodeEvent(name: string, data: unknown): Buffer {
  const disc = eventDisc.get(name);
  if (!disc) throw new Error(`IDL has no event ${name}`);
  return Buffer.concat([disc, coder.types.encode(name, data)]);
}

export function decodeEventBody(name: string, payload: Buffer): unknown {
  return coder.types.decode(name, payload.subarray(8));
}

/** Rent-exempt minimum, as Solana computes it for the default rent. */
export function rentExempt(size: number): number {
  return (128 + size) * 6960;
}
