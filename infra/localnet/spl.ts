/**
 * SPL Token accounts in their fixed binary layouts: Mint (82 bytes) and Account (165
 * bytes). Clients read mint decimals from these bytes, so they must be exact.
 */
import { PublicKey } from '@solana/web3.js';

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;

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

/** mint, owner, amount u64, delegate COption, state u8 (1 = initialized), is_native COption<u64>, delegated_amount, close_authority */
export function encodeTokenAccount(opts: { mint: PublicKey; owner: PublicKey; amount: bigint }): Buffer {
  const b = Buffer.alloc(TOKEN_ACCOUNT_SIZE);
  opts.mint.toBuffer().copy(b, 0);
  opts.owner.toBuffer().copy(b, 32);
  b.writeBigUInt64LE(opts.amount, 64);
  b.writeUInt8(1, 108);
  return b;
}

export function readTokenAccount(data: Buffer): { mint: PublicKey; owner: PublicKey; amount: bigint } | undefined {
  if (data.length !== TOKEN_ACCOUNT_SIZE || data[108] !== 1) return undefined;
  return {
    mint: new PublicKey(data.subarray(0, 32)),
    owner: new PublicKey(data.subarray(32, 64)),
    amount: data.readBigUInt64LE(64),
  };
}
