/**
 * A chain whose answers move between two reads, for the tests of what is resolved in doubt
 * (settlement-in-doubt, scheduler-in-doubt): the localnet's RPC, with one transaction's
 * confirmation arriving late; and for the tests of a policy read missing
 * (settlement-policy-absent, scheduler-policy-absent): one account not there yet.
 */
import { RpcResponseError, type RpcClient } from '../../infra/solana/rpc-client.js';

/**
 * The localnet's RPC as a cluster answers it around one transaction's confirmation: until
 * `confirms` happens, `signature` is processed but not confirmed (no status at the
 * confirmed commitment) and its blockhash still valid; from then on the transaction is
 * confirmed and its blockhash expired. `confirms`: 'on-blockhash-read' (the first
 * isBlockhashValid of it), or 'on-resend' (a send of the same bytes, which the node's
 * preflight refuses: by then the blockhash is not found).
 */
export function confirmingLate(rpc: RpcClient, signed: { signature: string; blockhash: string; wire: string }, confirms: 'on-blockhash-read' | 'on-resend'): RpcClient {
  let confirmed = false;
  return {
    url: rpc.url,
    async call<T>(method: string, params: readonly unknown[] = [], opts?: { timeoutMs?: number }): Promise<T> {
      if (method === 'isBlockhashValid' && params[0] === signed.blockhash) {
        if (confirms === 'on-blockhash-read') confirmed = true;
        return { context: { slot: 0 }, value: !confirmed } as T;
      }
      if (method === 'sendTransaction' && params[0] === signed.wire && confirms === 'on-resend' && !confirmed) {
        confirmed = true;
        throw new RpcResponseError(-32002, 'Transaction simulation failed: Blockhash not found', method);
      }
      if (method === 'getSignatureStatuses' && !confirmed && (params[0] as string[]).includes(signed.signature)) {
        const real = await rpc.call<{ context: unknown; value: unknown[] }>(method, params, opts);
        return { ...real, value: (params[0] as string[]).map((x, i) => (x === signed.signature ? null : real.value[i])) } as T;
      }
      return rpc.call<T>(method, params, opts);
    },
    batch: (method, paramsList, opts) => rpc.batch(method, paramsList, opts),
  };
}


/**
 * The localnet's RPC as a node behind the one that confirmed `address` answers it: while
 * `behind()`, no account there, to getAccountInfo and in getMultipleAccounts alike (the
 * scheduler reads a batch's accounts with one call). `missed` counts the answers it changed.
 */
export function laggingAccount(rpc: RpcClient, address: string, behind: () => boolean): RpcClient & { missed: number } {
  const lagging = {
    url: rpc.url,
    missed: 0,
    async call<T>(method: string, params: readonly unknown[] = [], opts?: { timeoutMs?: number }): Promise<T> {
      const real = await rpc.call<T>(method, params, opts);
      if (!behind()) return real;
      if (method === 'getAccountInfo' && params[0] === address) {
        lagging.missed += 1;
        return { ...(real as object), value: null } as T;
      }
      if (method === 'getMultipleAccounts' && (params[0] as string[]).includes(address)) {
        lagging.missed += 1;
        const r = real as { value: unknown[] };
        return { ...r, value: (params[0] as string[]).map((a, k) => (a === address ? null : r.value[k])) } as T;
      }
      return real;
    },
    batch: <T>(method: string, paramsList: readonly (readonly unknown[])[], opts?: { timeoutMs?: number }) => rpc.batch<T>(method, paramsList, opts),
  };
  return lagging;
}
