/**
 * A TCP proxy on 127.0.0.1 to `target`: each client connection gets its own upstream one, and
 * `wire` decides how bytes pass between them (slow-proxy.ts, cutting-proxy.ts). An error on
 * either side closes both; close() ends every connection and the server.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy { port: number; close(): Promise<void> }

export async function startTcpProxy(target: { host: string; port: number }, wire: (client: Socket, upstream: Socket) => void): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    wire(client, upstream);
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
