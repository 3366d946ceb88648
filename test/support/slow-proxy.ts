/**
 * A TCP proxy on 127.0.0.1 that holds back every byte a client sends for `delayMs` before
 * passing it on (in order); what the server sends comes back at once. A test points one
 * process at it to make its commands land late: a subscription asked for, say.
 */
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export type SlowProxy = TcpProxy;

export async function startSlowProxy(target: { host: string; port: number }, delayMs: number): Promise<SlowProxy> {
  return startTcpProxy(target, (client, upstream) => {
    // the same delay for every chunk: timers of one delay fire in order, so bytes keep theirs
    client.on('data', (chunk) => { setTimeout(() => { if (!upstream.destroyed) upstream.write(chunk); }, delayMs); });
    client.on('end', () => { setTimeout(() => upstream.end(), delayMs); });
    upstream.pipe(client);
  });
}
