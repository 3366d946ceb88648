/**
 * SPL Token accounts in their fixed binary layouts: Mint (82 bytes) and Account (165
 * bytes). Clients read mint decimals, balances and delegations from these bytes, so they
 * must be exact. Token-2022 uses the same base layouts; its accounts here carry only
 * the ImmutableOwner extension every associated token account of Token-2022 has.
 */
import { PublicKey } from '@solana/web3.js';

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
/**
 * After a Token-2022 account's base: AccountType::Account (2), then the ImmutableOwner
 * extension's TLV (type 7, length 0).
 */
const IMMUTABLE_OWNER_TAIL = Buffer.from([2, 7, 0, 0, 0]);

export const tokenAccountSize = (program: string): number =>
  (program === TOKEN_2022 ? TOKEN_ACCOUNT_SIZE + IMMUTABLE_OWNER_TAIL.length : TOKEN_ACCOUNT_SIZE);

/** A token account's layout: the base alone, or the base and Token-2022's account type and extensions. */
export const isTokenAccountData = (data: Buffer): boolean =>
  data.length === TOKEN_ACCOUNT_SIZE || (data.length > TOKEN_ACCOUNT_SIZE && data[TOKEN_ACCOUNT_SIZE] === 2);

/** mint_authority COption<Pubkey>, supply u64, decimals u8, is_initialized bool, freeze_authority COption<Pubkey> */
export function encodeMint(opts: { authority: PublicKey; supply: bigint; decimals: number }): Buffer {
  const b = Buffer.alloc(MINT_SIZE);
  b.writeUInt32LE(1, 0);
  opts.authority.toBuffer().copy(b, 4);
  b.writeBigUInt64LE(opts.supply, 36);
  b.writeUInt8(opts.decimals, 44);
  b.writeUInt8(1, 45);
  return b; // freeze authority: None (COption tag 0 and zeroes)
}

export function mintDecimals(data: Buffer): number | undefined {
  return data.length === MINT_SIZE && data[45] === 1 ? data.readUInt8(44) : undefined;
}

export interface MintInfo { authority: PublicKey | null; supply: bigint; decimals: number; freezeAuthority: PublicKey | null }

export function readMint(data: Buffer): MintInfo | undefined {
  if (data.length !== MINT_SIZE || data[45] !== 1) return undefined;
  return {
    authority: data.readUInt32LE(0) === 1 ? new PublicKey(data.subarray(4, 36)) : null,
    supply: data.readBigUInt64LE(36),
    decimals: data.readUInt8(44),
    freezeAuthority: data.readUInt32LE(46) === 1 ? new PublicKey(data.subarray(50, 82)) : null,
  };
}

export interface TokenAccount {
  mint: PublicKey;
  owner: PublicKey;
  amount: bigint;
  delegate: PublicKey | null;
  delegatedAmount: bigint;
}

/**
 * mint 0..32, owner 32..64, amount u64 @64, delegate COption<Pubkey> @72 (tag u32 + key),
 * state u8 @108 (1 = initialized), is_native COption<u64> @109, delegated_amount u64 @121,
 * close_authority COption<Pubkey> @129.
 */
export function encodeTokenAccount(
  opts: { mint: PublicKey; owner: PublicKey; amount: bigint; delegate?: PublicKey | null; delegatedAmount?: bigint }, program?: string,
): Buffer {
  const b = Buffer.alloc(program === undefined ? TOKEN_ACCOUNT_SIZE : tokenAccountSize(program));
  if (b.length > TOKEN_ACCOUNT_SIZE) IMMUTABLE_OWNER_TAIL.copy(b, TOKEN_ACCOUNT_SIZE);
  opts.mint.toBuffer().copy(b, 0);
  opts.owner.toBuffer().copy(b, 32);
  b.writeBigUInt64LE(opts.amount, 64);
  if (opts.delegate) {
    b.writeUInt32LE(1, 72);
    opts.delegate.toBuffer().copy(b, 76);
    b.writeBigUInt64LE(opts.delegatedAmount ?? 0n, 121);
  }
  b.writeUInt8(1, 108);
  return b;
}

export function readTokenAccount(data: Buffer): TokenAccount | undefined {
  if (!isTokenAccountData(data) || data[108] !== 1) return undefined;
  const hasDelegate = data.readUInt32LE(72) === 1;
  return {
    mint: new PublicKey(data.subarray(0, 32)),
    owner: new PublicKey(data.subarray(32, 64)),
    amount: data.readBigUInt64LE(64),
    delegate: hasDelegate ? new PublicKey(data.subarray(76, 108)) : null,
    delegatedAmount: hasDelegate ? data.readBigUInt64LE(121) : 0n,
  };
}

/** The decimal string of a base-unit amount, as uiAmountString renders it (no trailing zeros). */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const scale = 10n ** BigInt(decimals);
  const frac = (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return frac ? `${amount / scale}.${frac}` : `${amount / scale}`;
}

/** Solana's UiTokenAmount: `uiAmount` is the node's own lossy float, kept for wire compatibility. */
export function uiTokenAmount(amount: bigint, decimals: number): { amount: string; decimals: number; uiAmount: number; uiAmountString: string } {
  const s = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(s), uiAmountString: s };
}
