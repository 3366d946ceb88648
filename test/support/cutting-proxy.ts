/**
 * A TCP proxy on 127.0.0.1 that can lose one answer: armed with a marker, the next chunk the
 * server sends that holds it is dropped and the client's connection closed, as when a server
 * restarts or a connection resets after a command ran and before its answer arrived. Or it can
 * lose a client while its command runs: the next chunk the client sends that holds a marker is
 * passed on, then the client's connection closed while the server's stays open, its answers
 * dropped (a network reset between the two: the server learns of it only when it answers).
 * Every other byte passes at once, both ways.
 */
import { startTcpProxy } from './tcp-proxy.js';

export interface CuttingProxy {
  port: number;
  /** the next answer holding `marker` is lost with its connection */
  cutNextAnswerWith(marker: string): void;
  /**
   * the next command holding `marker` reaches the server, and its client's connection is lost at
   * once: closed, or reset (the client reads ECONNRESET)
   */
  cutNextRequestWith(marker: string, how?: 'close' | 'reset'): void;
  /** answers lost so far */
  cuts(): number;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  let armed: Buffer | undefined;
  let request: { marker: Buffer; how: 'close' | 'reset' } | undefined;
  let cuts = 0;
  const proxy = await startTcpProxy(target, (client, upstream) => {
    let severed = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (request && chunk.includes(request.marker)) {
        const how = request.how;
        request = undefined;
        cuts += 1;
        severed = true;
        if (how === 'reset') client.resetAndDestroy(); else client.destroy();
      }
    });
    client.on('end', () => { if (!severed) upstream.end(); });
    upstream.on('data', (chunk: Buffer) => {
      if (severed) return;
      if (armed && chunk.includes(armed)) {
        armed = undefined;
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on('end', () => client.end());
  });
  return {
    ...proxy, cutNextAnswerWith(marker) { armed = Buffer.from(marker); }, cutNextRequestWith(marker, how = 'close') { request = { marker: Buffer.from(marker), how }; }, cuts: () => cuts,
  };
}
