/**
 * A local HTTP server standing in for an outside service in tests: it records every call
 * (path, query, headers) and can be switched to fail (HTTP 500 or a dropped connection)
 * or to answer slowly, so tests prove timeouts, breakers and fallbacks on real sockets.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export type StandInMode = { kind: 'ok' } | { kind: 'down' } | { kind: 'drop' } | { kind: 'slow'; ms: number };

export interface StandInRequest { method: string; path: string; query: URLSearchParams; headers: IncomingMessage['headers']; body: string }
export interface StandInReply { status?: number; body: unknown }
export type StandInHandler = (req: StandInRequest) => StandInReply | Promise<StandInReply>;

export interface StandIn {
  url: string;
  calls: RecordedCall[];
  /** calls whose path ends with `suffix` */
  callsTo(suffix: string): RecordedCall[];
  setMode(mode: StandInMode): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startStandIn(handler: StandInHandler): Promise<StandIn> {
  let mode: StandInMode = { kind: 'ok' };
  const calls: RecordedCall[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const body = await readBody(req);
      const call = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body };
      calls.push(call);
      if (mode.kind === 'drop') { req.socket.destroy(); return; }
      if (mode.kind === 'down') { res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal"}'); return; }
      if (mode.kind === 'slow') await new Promise((r) => setTimeout(r, (mode as { ms: number }).ms));
      if (res.destroyed) return;
      const reply = await handler(call);
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    })().catch(() => { if (!res.headersSent) res.writeHead(500).end(); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    callsTo: (suffix) => calls.filter((c) => c.path.endsWith(suffix)),
    setMode(m) { mode = m; },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
