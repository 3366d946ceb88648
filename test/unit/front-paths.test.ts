/**
 * front-paths.ts picks the route express's router runs: for each router option and each
 * URL, the route findGet names (and its params) is the route express runs, undefined
 * exactly where express runs none or refuses the URL (a param that does not decode, in a
 * GET route or in a route of another method matched before it).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import { expect } from 'chai';
import { findGet, routeMatcher, type DeclaredRoute } from '../../infra/http/front-paths.js';

const ROUTES: readonly { method: 'get' | 'post'; path: string }[] = [
  { method: 'get', path: '/v1/events' },
  { method: 'get', path: '/v1/events/names' },
  { method: 'post', path: '/v1/events/:name/replay' },
  { method: 'get', path: '/v1/events/:name' },
  { method: 'get', path: '/v1/events/typed/:eventName' },
  { method: 'get', path: '/v1/onetime/:trackingId' },
  { method: 'get', path: '/v1/files/*rest' },
  { method: 'get', path: '/v1/opt{/:x}' },
  { method: 'get', path: '/v1/slash/' },
  // a literal only a raw escape matches, behind a route of another method whose param does not decode there
  { method: 'post', path: '/v1/raw/:x' },
  { method: 'get', path: '/v1/raw/%ZZ' },
];

const URLS = [
  '/v1/events', '/v1/events?limit=2', '/V1/EVENTS', '/v1/Events/Names', '/v1/events/', '/v1/events//', '//v1/events', '/v1//events',
  '/v1/events/names', '/v1/events/names/', '/v1/events%2Fnames', '/v1/events%2fnames', '/v1/events/na%6Des',
  '/v1/events/typed/PaymentRecord', '/v1/events/typed/Payment%52ecord/', '/v1/events/typed/', '/v1/events/typed/a/b',
  '/v1/events/%ZZ/replay', '/v1/events/%ZZ', '/v1/events/ok/replay',
  '/v1/onetime/order-1', '/v1/onetime/a%2Fb', '/v1/onetime/caf%C3%A9', '/v1/onetime/%F0%9F%92%B8', '/v1/onetime/%E0%A4%A', '/v1/onetime/%C3',
  '/v1/onetime/x%', '/v1/onetime/', '/v1/onetime/%2e%2e',
  '/v1/files/a/b%20c', '/v1/files/a%2Fb/c', '/v1/files/', '/v1/files/%ZZ/x',
  '/v1/opt', '/v1/opt/', '/v1/opt/1', '/v1/opt/1/', '/v1/opt/1/2',
  '/v1/slash', '/v1/slash/', '/v1/slash//', '/v1/raw/%ZZ', '/v1/raw/%zz',
  '/v1/events#frag', '/v1/onetime/a#b', '/v1/nothing',
];

/** A GET of the raw path (as the client wrote it), answered with the route express ran. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const options of [{}, { caseSensitive: true }, { strict: true }, { caseSensitive: true, strict: true }]) {
  describe(`front-paths against express's router (${JSON.stringify(options)})`, () => {
    it('names the route express runs, with its params, and nothing where express runs none', async () => {
      const router = express.Router(options);
      const declared: (DeclaredRoute & { index: number })[] = [];
      ROUTES.forEach((r, index) => {
        router[r.method](r.path, (req, res) => { res.json({ index, params: { ...req.params } }); });
        declared.push({ index, get: r.method === 'get', match: routeMatcher(r.path, router as { caseSensitive?: boolean; strict?: boolean }) });
      });
      const app = express();
      app.use(router);
      app.use((_req, res) => { res.status(404).json({ index: 'none' }); });
      const refused: ErrorRequestHandler = (err: { status?: number }, _req, res, _next) => { res.status(err.status ?? 500).json({ index: 'refused' }); };
      app.use(refused);
      /** what front makes of each URL the server received, by URL */
      const picked = new Map<string, string>();
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        const found = findGet(declared, req.url!);
        picked.set(req.url!, JSON.stringify(found === undefined ? undefined : { index: found.route.index, params: { ...found.params } }));
        app(req, res);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        for (const url of URLS) {
          const answer = await get(port, url);
          if (answer.body === "") throw new Error(`${url}: ${answer.status}`);
          const ran = JSON.parse(answer.body) as { index: number | string; params?: unknown };
          expect(picked.has(url), url).to.equal(true);
          // a URL parseurl reads on its slow path is left to express, whatever it matches
          const slow = url.includes('#');
          expect(picked.get(url), url).to.equal(typeof ran.index === 'number' && !slow ? JSON.stringify(ran) : undefined);
          if (ran.index === 'refused') expect(answer.status, url).to.equal(400);
        }
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });
}
