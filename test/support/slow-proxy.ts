/**
 * A TCP proxy on 127.0.0.1 that holds back every byte a client sends for `delayMs` before
 * passing it on (in order); what the server sends comes back at once. A test points one
 * process at it to make its commands land late: a subscription asked for, say.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface SlowProxy { port: number; close(): Promise<void> }

export async function startSlowProxy(target: { host: string; port: number }, delayMs: number): Promise<SlowProxy> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    // the same delay for every chunk: timers of one delay fire in order, so bytes keep theirs
    client.on('data', (chunk) => { setTimeout(() => { if (!upstream.destroyed) upstream.write(chunk); }, delayMs); });
    client.on('end', () => { setTimeout(() => upstream.end(), delayMs); });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      for (const s of open) s.destroy();
      server.close(() => resolve());
    }),
  };
}
