/**
 * A narrow Solana JSON-RPC client over fetch: one POST per call, every call bounded by a
 * timeout. Two typed failures, so callers can tell "the chain said no" from "the chain
 * did not answer":
 *   - RpcUnavailableError: network failure, timeout, non-2xx HTTP status, unparseable body;
 *   - RpcResponseError: the node answered with a JSON-RPC error object (code, message).
 * No retries here: the caller knows whether retrying is worth its latency budget.
 */

export interface RpcClientOptions {
  url: string;
  /** per call, milliseconds */
  timeoutMs: number;
  /** injected for tests; defaults to the global fetch */
  fetch?: typeof fetch;
}

export interface RpcClient {
  readonly url: string;
  call<T>(method: string, params?: readonly unknown[], opts?: { timeoutMs?: number }): Promise<T>;
}

export class RpcUnavailableError extends Error {
  constructor(message: string, readonly method: string) {
    super(message);
    this.name = 'RpcUnavailableError';
  }
}

export class RpcResponseError extends Error {
  constructor(readonly code: number, message: string, readonly method: string, readonly data?: unknown) {
    super(message);
    this.name = 'RpcResponseError';
  }
}

interface JsonRpcReply<T> { jsonrpc: '2.0'; id: number; result?: T; error?: { code: number; message: string; data?: unknown } }

export function createRpcClient(options: RpcClientOptions): RpcClient {
  const doFetch = options.fetch ?? fetch;
  let nextId = 1;
  return {
    url: options.url,
    async call<T>(method: string, params: readonly unknown[] = [], opts: { timeoutMs?: number } = {}): Promise<T> {
      const id = nextId++;
      let res: Response;
      let text: string;
      try {
        res = await doFetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
          signal: AbortSignal.timeout(opts.timeoutMs ?? options.timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        const e = err as Error;
        const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timed out' : e.message;
        throw new RpcUnavailableError(`RPC ${method} failed: ${why}`, method);
      }
      if (!res.ok) throw new RpcUnavailableError(`RPC ${method} answered HTTP ${res.status}`, method);
      let reply: JsonRpcReply<T>;
      try {
        reply = JSON.parse(text) as JsonRpcReply<T>;
      } catch {
        throw new RpcUnavailableError(`RPC ${method} answered a body that is not JSON`, method);
      }
      if (reply.error) throw new RpcResponseError(reply.error.code, reply.error.message, method, reply.error.data);
      return reply.result as T;
    },
  };
}
