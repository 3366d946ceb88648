/**
 * When a metered request counts as served (response-end.ts), over a real HTTP server and client:
 * watched before the response is over, and after it (the client left while the chunk was being
 * metered, or the answer was already written), when no event is left to come.
 */
import { expect } from 'chai';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onResponseEnd } from '../../commands/x402/response-end.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** a server answering with `handler`, and a GET the client gives up after `abortMs` (none: waits for the answer) */
async function exchange(handler: Handler, abortMs?: number): Promise<void> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const abort = new AbortController();
    if (abortMs !== undefined) setTimeout(() => abort.abort(), abortMs);
    await fetch(url, { signal: abort.signal }).then((r) => r.text()).catch(() => undefined);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** resolves with what `ended` was called with, once, or undefined if it is not within `ms` */
function watched(ms: number): { ended: (served: boolean) => void; outcome: Promise<boolean[]> } {
  const calls: boolean[] = [];
  return { ended: (served) => calls.push(served), outcome: new Promise((r) => setTimeout(() => r(calls), ms)) };
}

describe('x402 response end: served or not, once, however late it is watched', () => {
  it('a response answered after it is watched: served, once', async () => {
    const w = watched(300);
    await exchange((_req, res) => { onResponseEnd(res, w.ended); res.end('ok'); });
    expect(await w.outcome).to.deep.equal([true]);
  });

  it('a client that leaves before the answer begins: not served', async () => {
    const w = watched(600);
    await exchange((_req, res) => { onResponseEnd(res, w.ended); setTimeout(() => res.end('late'), 300); }, 50);
    expect(await w.outcome).to.deep.equal([false]);
  });

  it('a client that left before the response was watched (its chunk still being metered): not served, at once', async () => {
    const w = watched(800);
    let closedFirst = false;
    // the grant comes back after the client left: 'close' has fired already and will not again
    await exchange((_req, res) => { setTimeout(() => { closedFirst = res.closed; onResponseEnd(res, w.ended); }, 300); }, 50);
    expect(await w.outcome).to.deep.equal([false]);
    expect(closedFirst, 'the response was closed before it was watched').to.equal(true);
  });

  it('a response finished before it is watched: served', async () => {
    const w = watched(300);
    await exchange((_req, res) => { res.end('ok', () => onResponseEnd(res, w.ended)); });
    expect(await w.outcome).to.deep.equal([true]);
  });
});
