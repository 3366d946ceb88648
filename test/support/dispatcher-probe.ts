/**
 * Run as its own process (test/unit/builtin-dispatcher.test.ts): loads the outbound POST
 * module (and with it the npm undici), then makes the call @solana/kit's RPC transport
 * makes, a built-in fetch that sets content-length itself, and prints its outcome.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import '../../infra/http/post-json.js';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('{"ok":true}'));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' });
try {
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  });
  process.stdout.write(`status ${res.status}\n`);
} catch (err) {
  process.stdout.write(`error ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}\n`);
}
server.close();
