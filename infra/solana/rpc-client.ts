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
  /**
   * Several calls in one JSON-RPC batch (one POST, an array of requests), as Solana's RPC
   * serves them. Each result is its value or the RpcResponseError the node answered for
   * it; a batch that gets no answer at all throws RpcUnavailableError.
   */
  batch<T>(method: string, paramsList: readonly (readonly unknown[])[], opts?: { timeoutMs?: number }): Promise<(T | RpcResponseError)[]>;
}

export class RpcUnavailableError extends Error {
  /** the HTTP status when the node answered one that is not 2xx (429: rate limited) */
  constructor(message: string, readonly method: string, readonly httpStatus?: number) {
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

  /** One POST; the parsed body, or RpcUnavailableError when there is none to parse. */
  async function post(method: string, body: unknown, timeoutMs: number | undefined): Promise<unknown> {
    let res: Response;
    let text: string;
    try {
      res = await doFetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs ?? options.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const e = err as Error;
      const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timed out' : e.message;
      throw new RpcUnavailableError(`RPC ${method} failed: ${why}`, method);
    }
    if (!res.ok) throw new RpcUnavailableError(`RPC ${method} answered HTTP ${res.status}`, method, res.status);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new RpcUnavailableError(`RPC ${method} answered a body that is not JSON`, method);
    }
  }

  const outcome = <T>(reply: JsonRpcReply<T>, method: string): T | RpcResponseError => (
    reply.error ? new RpcResponseError(reply.error.code, reply.error.message, method, reply.error.data) : reply.result as T);

  return {
    url: options.url,
    async call<T>(method: string, params: readonly unknown[] = [], opts: { timeoutMs?: number } = {}): Promise<T> {
      const reply = await post(method, { jsonrpc: '2.0', id: nextId++, method, params }, opts.timeoutMs) as JsonRpcReply<T>;
      const r = outcome(reply, method);
      if (r instanceof RpcResponseError) throw r;
      return r;
    },
    async batch<T>(method: string, paramsList: readonly (readonly unknown[])[], opts: { timeoutMs?: number } = {}): Promise<(T | RpcResponseError)[]> {
      if (paramsList.length === 0) return [];
      const ids = paramsList.map(() => nextId++);
      const body = await post(method, paramsList.map((params, i) => ({ jsonrpc: '2.0', id: ids[i], method, params })), opts.timeoutMs);
      if (!Array.isArray(body)) {
        // a node that refuses batches answers one error object
        const e = (body as Partial<JsonRpcReply<T>>).error;
        throw e ? new RpcResponseError(e.code, e.message, method, e.data) : new RpcUnavailableError(`RPC ${method} batch answered no array`, method);
      }
      const byId = new Map((body as JsonRpcReply<T>[]).map((r) => [r.id, r]));
      return ids.map((id) => {
        const reply = byId.get(id);
        return reply ? outcome(reply, method) : new RpcResponseError(-32603, 'no answer for this call in the batch', method);
      });
    },
  };
}
