/** Free TCP ports on 127.0.0.1 for processes a test starts (the OS picks; we release and hand over). */
import { createServer } from 'node:net';

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : undefined));
    });
  });
}

export async function freePort(): Promise<number> {
  const port = await tryListen(0);
  if (port === undefined) throw new Error('no free port');
  return port;
}

/** A free port whose successor is free too: the localnet's JSON-RPC and websocket pair. */
export async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await freePort();
    if (port < 65535 && (await tryListen(port + 1)) !== undefined) return port;
  }
  throw new Error('no free pair of consecutive ports');
}
