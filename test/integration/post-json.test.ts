/**
 * The outbound POST client of webhook deliveries (infra/http/post-json.ts) against real
 * receivers on loopback: what it resolves with, why it rejects, and that it keeps its
 * sockets per origin.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createJsonPoster, PostError, type JsonPoster } from '../../infra/http/post-json.js';

interface Receiver { url: string; connections: number; bodies: string[]; close(): Promise<void> }

async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<Receiver> {
  const r = { connections: 0, bodies: [] as string[] };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { body += c; });
    req.on('end', () => { r.bodies.push(body); answer(req, res, body); });
  });
  server.on('connection', () => { r.connections += 1; });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(r, {
    url: `http://127.0.0.1:${port}/hook?x=1`,
    close: async () => { server.closeAllConnections(); server.close(); await once(server, 'close'); },
  });
}

async function rejection(p: Promise<unknown>): Promise<PostError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(PostError);
    return err as PostError;
  }
  throw new Error('expected a rejection');
}

describe('outbound JSON POSTs (webhook deliveries)', () => {
  const posters: JsonPoster[] = [];
  const receivers: Receiver[] = [];
  const poster = (o: Partial<Parameters<typeof createJsonPoster>[0]> = {}): JsonPoster => {
    const p = createJsonPoster({ allowPrivateTargets: true, maxSockets: 4, userAgent: 'post-json-test', ...o });
    posters.push(p);
    return p;
  };
  const receiving = async (answer: Parameters<typeof receiver>[0]): Promise<Receiver> => {
    const r = await receiver(answer);
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    for (const p of posters.splice(0)) p.close();
    for (const r of receivers.splice(0)) await r.close();
  });

  it('resolves with any complete answer: its status, Retry-After as sent, the body and headers as given', async () => {
    let seen: http.IncomingHttpHeaders = {};
    const r = await receiving((req, res) => {
      seen = req.headers;
      if (req.url === '/hook?x=1') res.writeHead(503, { 'retry-after': '7' }).end('busy');
      else res.writeHead(404).end();
    });
    const p = poster();
    const a = await p.post(r.url, '{"a":1}', { 'webhook-id': 'msg_1' }, { timeoutMs: 5_000 });
    expect(a.statusCode).to.equal(503);
    expect(a.retryAfter).to.equal('7');
    expect(r.bodies).to.deep.equal(['{"a":1}']);
    expect(seen['content-type']).to.equal('application/json');
    expect(seen['user-agent']).to.equal('post-json-test');
    expect(seen['webhook-id']).to.equal('msg_1');
    const b = await p.post(r.url, Buffer.from('{"b":2}'), {}, { timeoutMs: 5_000 });
    expect(b.statusCode).to.equal(503);
    expect(r.bodies[1]).to.equal('{"b":2}');
  });

  it('answers once the first 64 KiB of a long response body are read, and drops the rest', async () => {
    const r = await receiving((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(200 * 1024, 'x'));
      // never ends: the client must not wait for the end
    });
    const a = await poster().post(r.url, '{}', {}, { timeoutMs: 3_000 });
    expect(a.statusCode).to.equal(200);
    expect(a.latencyMs).to.be.below(3_000);
  });

  it('times the whole exchange out with one timer, a receiver that never answers included', async () => {
    const r = await receiving(() => { /* never answers */ });
    const e = await rejection(poster().post(r.url, '{}', {}, { timeoutMs: 300 }));
    expect(e.kind).to.equal('timeout');
    expect(e.message).to.equal('timed out after 300 ms');
    expect(e.latencyMs).to.be.within(250, 2_000);
  });

  it('rejects a refused connection as a network error naming its code', async () => {
    const r = await receiving((_q, s) => s.end());
    const url = r.url;
    await r.close();
    receivers.pop();
    const e = await rejection(poster().post(url, '{}', {}, { timeoutMs: 3_000 }));
    expect(e.kind).to.equal('network');
    expect(e.message).to.match(/^ECONNREFUSED/);
  });

  it('refuses private targets when told to: an IP literal before connecting, a name at its lookup', async () => {
    const r = await receiving((_q, s) => s.end());
    const p = poster({ allowPrivateTargets: false });
    const literal = await rejection(p.post(r.url, '{}', {}, { timeoutMs: 3_000 }));
    expect(literal.kind).to.equal('refused_target');
    const byName = await rejection(p.post(r.url.replace('127.0.0.1', 'localhost'), '{}', {}, { timeoutMs: 3_000 }));
    expect(byName.kind).to.equal('refused_target');
    expect(byName.message).to.match(/localhost resolves to .*loopback/);
    const scheme = await rejection(p.post('ftp://example.com/x', '{}', {}, { timeoutMs: 3_000 }));
    expect(scheme.kind).to.equal('refused_target');
    expect(r.bodies).to.have.length(0);
  });

  it('a stop signal aborts requests in flight and queued behind them, and refuses new ones', async () => {
    const r = await receiving(() => { /* holds every request */ });
    const p = poster({ maxSockets: 1 });
    const stop = new AbortController();
    const inFlight = rejection(p.post(r.url, '{}', {}, { timeoutMs: 10_000, signal: stop.signal }));
    const queued = rejection(p.post(r.url, '{}', {}, { timeoutMs: 10_000, signal: stop.signal }));
    while (r.bodies.length < 1) await new Promise((s) => setTimeout(s, 10));
    stop.abort();
    expect((await inFlight).kind).to.equal('aborted');
    expect((await queued).kind).to.equal('aborted');
    expect((await rejection(p.post(r.url, '{}', {}, { timeoutMs: 10_000, signal: stop.signal }))).kind).to.equal('aborted');
    expect(r.bodies).to.have.length(1);
  });

  it('keeps its sockets alive per origin, at most maxSockets of them', async () => {
    const r = await receiving((_q, s) => s.end('ok'));
    const p = poster({ maxSockets: 4 });
    for (let round = 0; round < 5; round += 1) {
      const answers = await Promise.all(Array.from({ length: 40 }, () => p.post(r.url, '{}', {}, { timeoutMs: 5_000 })));
      expect(answers.every((a) => a.statusCode === 200)).to.equal(true);
    }
    expect(r.bodies).to.have.length(200);
    expect(r.connections).to.be.within(1, 4);
  });
});
