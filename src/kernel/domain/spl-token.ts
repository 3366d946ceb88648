/**
 * The few SPL Token and Associated Token Account instructions a payment carries, built
 * and decoded by their wire layout (the token program's instruction tag, then a u64
 * amount little-endian; the ATA program's tag 0 = create, 1 = create-idempotent). The
 * client builds them, the verifier decodes them and the localnet executes them, so all
 * three read this one definition.
 */
import { PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { createLru } from './lru.js';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EFLkv9e2Qx3UiGm8gTHSj';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const TOKEN_PROGRAM_KEY = new PublicKey(TOKEN_PROGRAM);
const ATA_PROGRAM_KEY = new PublicKey(ASSOCIATED_TOKEN_PROGRAM);

export const TOKEN_IX = { Transfer: 3, Approve: 4, Revoke: 5, TransferChecked: 12, ApproveChecked: 13 } as const;
export const U64_MAX = (1n << 64n) - 1n;

// deriving costs a curve check per bump tried; callers ask for the same few accounts again and again
const ataCache = createLru<string, string>(50_000);

/** The associated token account of (owner, mint) under the classic token program. */
export function associatedTokenAddress(owner: string, mint: string): string {
  const key = `${owner}:${mint}`;
  const hit = ataCache.get(key);
  if (hit) return hit;
  const address = PublicKey.findProgramAddressSync(
    [new PublicKey(owner).toBytes(), TOKEN_PROGRAM_KEY.toBytes(), new PublicKey(mint).toBytes()], ATA_PROGRAM_KEY,
  )[0].toBase58();
  ataCache.set(key, address);
  return address;
}

function u64Data(tag: number, amount: bigint): Buffer {
  if (amount < 0n || amount > U64_MAX) throw new Error(`amount ${amount} is not a u64`);
  const b = Buffer.alloc(9);
  b.writeUInt8(tag, 0);
  b.writeBigUInt64LE(amount, 1);
  return b;
}

const meta = (key: string, isSigner: boolean, isWritable: boolean): { pubkey: PublicKey; isSigner: boolean; isWritable: boolean } =>
  ({ pubkey: new PublicKey(key), isSigner, isWritable });

/** Approve: accounts source (w), delegate, owner (s). */
export function approveIx(source: string, delegate: string, owner: string, amount: bigint): TransactionInstruction {
  return new TransactionInstruction({
    programId: TOKEN_PROGRAM_KEY, keys: [meta(source, false, true), meta(delegate, false, false), meta(owner, true, false)],
    data: u64Data(TOKEN_IX.Approve, amount),
  });
}

/** Revoke: accounts source (w), owner (s). */
export function revokeIx(source: string, owner: string): TransactionInstruction {
  return new TransactionInstruction({
    programId: TOKEN_PROGRAM_KEY, keys: [meta(source, false, true), meta(owner, true, false)], data: Buffer.from([TOKEN_IX.Revoke]),
  });
}

/** Transfer: accounts source (w), destination (w), authority (s). */
export function transferIx(source: string, destination: string, authority: string, amount: bigint): TransactionInstruction {
  return new TransactionInstruction({
    programId: TOKEN_PROGRAM_KEY, keys: [meta(source, false, true), meta(destination, false, true), meta(authority, true, false)],
    data: u64Data(TOKEN_IX.Transfer, amount),
  });
}

/** The ATA program's CreateIdempotent: funder (s, w), ata (w), wallet, mint, system program, token program. */
export function createAtaIdempotentIx(funder: string, wallet: string, mint: string): TransactionInstruction {
  return new TransactionInstruction({
    programId: ATA_PROGRAM_KEY,
    keys: [
      meta(funder, true, true), meta(associatedTokenAddress(wallet, mint), false, true), meta(wallet, false, false),
      meta(mint, false, false), { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
      { pubkey: TOKEN_PROGRAM_KEY, isSigner: false, isWritable: false },
    ],
    data: Buffer.from([1]),
  });
}

export type DecodedTokenIx =
  | { kind: 'approve'; source: string; delegate: string; owner: string; amount: bigint }
  | { kind: 'revoke'; source: string; owner: string }
  | { kind: 'other'; tag: number | undefined };

/** A token program instruction from its data and account addresses (in instruction order). */
export function decodeTokenIx(data: Uint8Array, accounts: readonly string[]): DecodedTokenIx {
  const d = Buffer.from(data);
  const tag = d[0];
  if (tag === TOKEN_IX.Approve && d.length === 9 && accounts.length >= 3) {
    return { kind: 'approve', source: accounts[0]!, delegate: accounts[1]!, owner: accounts[2]!, amount: d.readBigUInt64LE(1) };
  }
  if (tag === TOKEN_IX.Revoke && d.length === 1 && accounts.length >= 2) return { kind: 'revoke', source: accounts[0]!, owner: accounts[1]! };
  return { kind: 'other', tag };
}

export type DecodedAtaIx = { kind: 'create' | 'createIdempotent'; funder: string; ata: string; wallet: string; mint: string } | { kind: 'other' };

export function decodeAtaIx(data: Uint8Array, accounts: readonly string[]): DecodedAtaIx {
  const mode = data.length === 0 ? 0 : data[0];
  const [funder, ata, wallet, mint, system, token] = accounts;
  if ((mode !== 0 && mode !== 1) || data.length > 1 || !funder || !ata || !wallet || !mint) return { kind: 'other' };
  if (system !== SystemProgram.programId.toBase58() || token !== TOKEN_PROGRAM) return { kind: 'other' };
  return { kind: mode === 1 ? 'createIdempotent' : 'create', funder, ata, wallet, mint };
}

/** What a charge through a delegation needs of an SPL token account (the token program's 165-byte layout). */
export interface TokenAccountState { owner: string; mint: string; amount: bigint; delegate: string | null; delegatedAmount: bigint }

/** An initialized token account's balance and delegation; undefined for anything else. */
export function decodeTokenAccountState(data: Uint8Array): TokenAccountState | undefined {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length !== 165 || b[108] !== 1) return undefined;
  const hasDelegate = b.readUInt32LE(72) === 1;
  return {
    mint: new PublicKey(b.subarray(0, 32)).toBase58(),
    owner: new PublicKey(b.subarray(32, 64)).toBase58(),
    amount: b.readBigUInt64LE(64),
    delegate: hasDelegate ? new PublicKey(b.subarray(76, 108)).toBase58() : null,
    delegatedAmount: hasDelegate ? b.readBigUInt64LE(121) : 0n,
  };
}
