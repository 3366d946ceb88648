/**
 * Reading Tributary program accounts over JSON-RPC and decoding them with the IDL's
 * account layouts. Contract:
 *   - `found`: the account exists, is owned by the program, and its discriminator and
 *     layout are the named account's; `data` is the codec's JSON form (decodeAccount);
 *   - `missing`: no account at the address (never created, or closed);
 *   - `mismatch`: an account exists but is not that program account (another owner,
 *     another discriminator, or data that does not decode);
 *   - RpcUnavailableError / RpcResponseError (rpc-client.ts) when the chain does not
 *     answer or answers with an error: the caller decides what a read model may say instead.
 */
import { idlAccounts } from '../../src/kernel/idl/index.js';
import { decodeAccount, type EventData } from '../../src/kernel/events/codec.js';
import type { RpcClient } from './rpc-client.js';

export type AccountRead =
  | { kind: 'found'; address: string; data: EventData; lamports: number; slot: number }
  | { kind: 'missing'; address: string; slot: number }
  | { kind: 'mismatch'; address: string; slot: number; reason: string };

export interface AccountReadOptions {
  programId: string;
  commitment?: 'processed' | 'confirmed' | 'finalized';
  timeoutMs?: number;
}

interface RpcAccount { data: [string, string] | string; owner: string; lamports: number }
interface RpcContextual<T> { context: { slot: number }; value: T }

const discriminators = new Map(idlAccounts.map((a) => [a.name, Buffer.from(a.discriminator)]));

function decodeOne(address: string, slot: number, accountName: string, programId: string, acc: RpcAccount | null): AccountRead {
  if (acc === null) return { kind: 'missing', address, slot };
  if (acc.owner !== programId) return { kind: 'mismatch', address, slot, reason: `owned by ${acc.owner}, not the program` };
  const raw = Array.isArray(acc.data) ? acc.data[0] : acc.data;
  const bytes = Buffer.from(raw, 'base64');
  const disc = discriminators.get(accountName);
  if (!disc) throw new Error(`IDL has no account ${accountName}`);
  if (bytes.length < 8 || !bytes.subarray(0, 8).equals(disc)) return { kind: 'mismatch', address, slot, reason: `not a ${accountName} account` };
  try {
    return { kind: 'found', address, slot, data: decodeAccount(accountName, bytes), lamports: acc.lamports };
  } catch (err) {
    return { kind: 'mismatch', address, slot, reason: `${accountName} data does not decode: ${(err as Error).message}` };
  }
}

function config(opts: AccountReadOptions): Record<string, string> {
  return { encoding: 'base64', ...(opts.commitment ? { commitment: opts.commitment } : {}) };
}

/** One account by address (getAccountInfo). */
export async function readProgramAccount(rpc: RpcClient, address: string, accountName: string, opts: AccountReadOptions): Promise<AccountRead> {
  const r = await rpc.call<RpcContextual<RpcAccount | null>>('getAccountInfo', [address, config(opts)], opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs });
  return decodeOne(address, r.context.slot, accountName, opts.programId, r.value);
}

/** Up to 100 accounts of one kind in one call (getMultipleAccounts), in the order asked. */
export async function readProgramAccounts(rpc: RpcClient, addresses: readonly string[], accountName: string, opts: AccountReadOptions): Promise<AccountRead[]> {
  if (addresses.length === 0) return [];
  if (addresses.length > 100) throw new Error('getMultipleAccounts takes at most 100 addresses');
  const r = await rpc.call<RpcContextual<(RpcAccount | null)[]>>('getMultipleAccounts', [addresses, config(opts)], opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs });
  return addresses.map((a, i) => decodeOne(a, r.context.slot, accountName, opts.programId, r.value[i] ?? null));
}
