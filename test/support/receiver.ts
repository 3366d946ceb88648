/**
 * Real webhook receivers for tests: HTTP servers on 127.0.0.1 that keep every request
 * (arrival time, headers, raw body) and answer as a test chooses: a status per request,
 * or 'hang' to never answer.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest { at: number; method: string; path: string; headers: IncomingHttpHeaders; body: string }

/** The answer to the n-th request (0-based): a status code, one with headers, or 'hang' to never answer. */
export type Answer = number | { status: number; headers: Record<string, string> } | 'hang';
export type Behavior = (n: number, req: ReceivedRequest) => Answer;

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** resolves with the requests once there are at least `count` */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(behavior: Behavior = () => 200, path = '/hook'): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReceivedRequest = { at: Date.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const n = requests.length;
      requests.push(r);
      for (const w of waiters.splice(0)) w();
      const answer = behavior(n, r);
      if (answer === 'hang') return;
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(status < 300 ? 'ok' : 'no');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`receiver got ${requests.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => { clearTimeout(t); resolve(); });
        });
      }
      return requests.slice();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
