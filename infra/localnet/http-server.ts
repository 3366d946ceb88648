/**
 * JSON-RPC 2.0 over HTTP, as Solana's RPC serves it: single and batch requests, Solana's
 * error codes, and `GET /health`. Handlers are synchronous functions over the chain.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Logger } from 'pino';
import { HttpFault, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError } from './rpc-errors.js';
import type { RpcMethod } from './rpc-methods.js';
import { responseText } from './rpc-json.js';

const MAX_BODY = 8 * 1024 * 1024;

type Id = string | number | null;
interface Response { jsonrpc: '2.0'; id: Id; result?: unknown; error?: { code: number; message: string; data?: unknown } }

const errorResponse = (id: Id, code: number, message: string, data?: unknown): Response =>
  ({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });

export function handleRpcRequest(methods: Record<string, RpcMethod>, req: unknown, log?: Logger): Response {
  const r = req as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  const id: Id = typeof r?.id === 'string' || typeof r?.id === 'number' ? r.id : null;
  if (typeof r !== 'object' || r === null || r.jsonrpc !== '2.0' || typeof r.method !== 'string') {
    return errorResponse(id, INVALID_REQUEST, 'Invalid request');
  }
  if (r.params !== undefined && !Array.isArray(r.params)) return errorResponse(id, INVALID_REQUEST, 'Invalid request');
  const method = Object.hasOwn(methods, r.method) ? methods[r.method] : undefined;
  if (!method) return errorResponse(id, METHOD_NOT_FOUND, 'Method not found');
  try {
    return { jsonrpc: '2.0', id, result: method((r.params as unknown[] | undefined) ?? []) };
  } catch (e) {
    if (e instanceof RpcError) return errorResponse(id, e.code, e.message, e.data);
    if (e instanceof HttpFault) throw e;
    log?.error({ err: e, method: r.method }, 'localnet rpc handler failed');
    return errorResponse(id, INTERNAL_ERROR, 'Internal error');
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function createRpcHttpServer(methods: Record<string, RpcMethod>, log?: Logger): Server {
  return createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    readBody(req).then((text) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return send(errorResponse(null, PARSE_ERROR, 'Parse error'));
      }
      let fault: HttpFault | undefined;
      const handle = (item: unknown): Response => {
        try {
          return handleRpcRequest(methods, item, log);
        } catch (e) {
          if (!(e instanceof HttpFault)) throw e;
          fault ??= e; // the batch's other requests still run; the whole answer is lost
          return errorResponse(null, INTERNAL_ERROR, 'Internal error');
        }
      };
      let body: Response | Response[];
      if (Array.isArray(parsed)) {
        if (parsed.length === 0) return send(errorResponse(null, INVALID_REQUEST, 'Invalid request'));
        body = parsed.map(handle);
      } else body = handle(parsed);
      if (!fault) return send(body);
      if (fault.status === 'drop') return void res.destroy();
      return void res.writeHead(fault.status, { 'content-type': 'application/json' }).end(fault.body);
    }, () => res.writeHead(413).end());

    function send(body: Response | Response[]): void {
      res.writeHead(200, { 'content-type': 'application/json' }).end(responseText(body));
    }
  });
}
