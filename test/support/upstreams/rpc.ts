/**
 * A Solana JSON-RPC stand-in answering `getAccountInfo` (base64) for token mints in the
 * SPL Mint layout, for tests that need mint decimals and no more of a chain.
 */
import { startStandIn, type StandIn } from './stand-in.js';
import { TOKEN_PROGRAM } from './fixtures.js';

export interface RpcAccount { owner: string; data: Buffer }

/** the 82-byte SPL Mint account: authority, supply, decimals @44, initialized @45 */
export function mintAccount(decimals: number, owner = TOKEN_PROGRAM): RpcAccount {
  const b = Buffer.alloc(82);
  b.writeUInt32LE(1, 0);
  b.writeBigUInt64LE(1_000_000_000_000n, 36);
  b.writeUInt8(decimals, 44);
  b.writeUInt8(1, 45);
  return { owner, data: b };
}

export async function startRpcStandIn(accounts: Readonly<Record<string, RpcAccount>>): Promise<StandIn> {
  return startStandIn((req) => {
    const call = JSON.parse(req.body || '{}') as { id?: number; method?: string; params?: unknown[] };
    if (call.method !== 'getAccountInfo') {
      return { body: { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32601, message: 'Method not found' } } };
    }
    const account = accounts[String(call.params?.[0])];
    const value = account
      ? { data: [account.data.toString('base64'), 'base64'], executable: false, lamports: 1_461_600, owner: account.owner, rentEpoch: 0, space: account.data.length }
      : null;
    return { body: { jsonrpc: '2.0', id: call.id ?? null, result: { context: { apiVersion: '2.1.0', slot: 349281000 }, value } } };
  });
}
