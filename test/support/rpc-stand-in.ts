/**
 * A JSON-RPC node in front of the localnet whose answers a test rewrites, as a real node can
 * misbehave: one behind the node that confirmed a transaction, one that loses an answer after
 * the transaction went through, one that reports a status below the commitment. Every POST
 * goes to `rewrite` with the request parsed and `forward` (the localnet's answer, as text);
 * what `rewrite` returns is the answer. `target.url` may be set after the localnet starts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcCall { jsonrpc?: string; id?: unknown; method?: string; params?: unknown[] }

export type RpcRewrite = (asked: RpcCall | RpcCall[], forward: () => Promise<string>) => Promise<string>;

export interface RpcStandIn { url: string; target: { url: string }; server: Server; close(): Promise<void> }

/** A JSON-RPC result for `asked`, as a node answers it. */
export const rpcResult = (asked: RpcCall, result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id: asked.id, result });

/** A JSON-RPC error for `asked`, as a node answers it. */
export const rpcError = (asked: RpcCall, error: { code: number; message: string; data?: unknown }): string => JSON.stringify({ jsonrpc: '2.0', id: asked.id, error });

export async function rpcStandIn(rewrite: RpcRewrite, targetUrl = ''): Promise<RpcStandIn> {
  const target = { url: targetUrl };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const forward = async (): Promise<string> => (await fetch(target.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text();
      rewrite(JSON.parse(body) as RpcCall | RpcCall[], forward)
        .then((text) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(text); })
        .catch(() => { res.writeHead(502); res.end(); });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, target, server,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
