/**
 * A token mint's decimals, read from the chain: `getAccountInfo` (base64) and the SPL
 * Mint layout, which Token-2022 shares for its first 82 bytes:
 *   mint_authority COption<Pubkey> (36) | supply u64 (8) | decimals u8 @44 |
 *   is_initialized bool @45 | freeze_authority COption<Pubkey> (36)
 *
 * Contract: resolves with the decimals; rejects with MintNotFoundError when no account
 * exists or it is not an initialized mint of a token program, and with the RPC client's
 * RpcUnavailableError / RpcResponseError when the chain cannot say.
 */
import type { RpcClient } from './rpc-client.js';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../../src/kernel/domain/spl-token.js';

export const MINT_LAYOUT_SIZE = 82;
const DECIMALS_OFFSET = 44;
const INITIALIZED_OFFSET = 45;

export class MintNotFoundError extends Error {
  constructor(readonly mint: string, reason: string) {
    super(`mint ${mint}: ${reason}`);
    this.name = 'MintNotFoundError';
  }
}

interface AccountInfoReply {
  value: { data: [string, string] | string; owner: string } | null;
}

/** decimals of an SPL / Token-2022 mint account's data, or undefined when it is not one */
export function parseMintDecimals(data: Buffer): number | undefined {
  if (data.length < MINT_LAYOUT_SIZE || data[INITIALIZED_OFFSET] !== 1) return undefined;
  return data.readUInt8(DECIMALS_OFFSET);
}

export async function readMintDecimals(rpc: RpcClient, mint: string, commitment = 'confirmed'): Promise<number> {
  const reply = await rpc.call<AccountInfoReply>('getAccountInfo', [mint, { encoding: 'base64', commitment }]);
  const account = reply?.value;
  if (!account) throw new MintNotFoundError(mint, 'no such account');
  if (account.owner !== TOKEN_PROGRAM && account.owner !== TOKEN_2022_PROGRAM) {
    throw new MintNotFoundError(mint, 'account is not owned by a token program');
  }
  const encoded = Array.isArray(account.data) ? account.data[0] : account.data;
  const decimals = parseMintDecimals(Buffer.from(encoded, 'base64'));
  if (decimals === undefined) throw new MintNotFoundError(mint, 'account is not an initialized mint');
  return decimals;
}
