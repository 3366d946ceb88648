/**
 * A TCP proxy on 127.0.0.1 that can lose one answer: armed with a marker, the next chunk the
 * server sends that holds it is dropped and the client's connection closed, as when a server
 * restarts or a connection resets after a command ran and before its answer arrived. Every
 * other byte passes at once, both ways.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface CuttingProxy {
  port: number;
  /** the next answer holding `marker` is lost with its connection */
  cutNextAnswerWith(marker: string): void;
  /** answers lost so far */
  cuts(): number;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  const open = new Set<Socket>();
  let armed: Buffer | undefined;
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    cutNextAnswerWith(marker) { armed = Buffer.from(marker); },
    cuts: () => cuts,
    close: () => new Promise<void>((resolve) => {
      for (const s of open) s.destroy();
      server.close(() => resolve());
    }),
  };
}
