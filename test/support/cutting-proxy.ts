/**
 * A TCP proxy on 127.0.0.1 that can lose one answer: armed with a marker, the next chunk the
 * server sends that holds it is dropped and the client's connection closed, as when a server
 * restarts or a connection resets after a command ran and before its answer arrived. Every
 * other byte passes at once, both ways.
 */
import { startTcpProxy } from './tcp-proxy.js';

export interface CuttingProxy {
  port: number;
  /** the next answer holding `marker` is lost with its connection */
  cutNextAnswerWith(marker: string): void;
  /** answers lost so far */
  cuts(): number;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  let armed: Buffer | undefined;
  let cuts = 0;
  const proxy = await startTcpProxy(target, (client, upstream) => {
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
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
  return { ...proxy, cutNextAnswerWith(marker) { armed = Buffer.from(marker); }, cuts: () => cuts };
}
