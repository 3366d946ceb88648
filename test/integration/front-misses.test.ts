/**
 * The list routes answered in front of express (cached-hits.ts's front, with the Api's
 * FrontRoutes): with the cache off, and on a cache miss, a list GET is validated and run
 * without express. These tests serve one node's routes twice, through the node's handler
 * and through express alone, and prove the two answer the same: status, headers and body
 * bytes for every list route, the same 400s, 404s and decode errors for bad input (which
 * front hands to express), one count per request under the standard limit and the same
 * 429, and the request's metrics under its route.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import type { AppContext } from '../../src/app/context.js';
import { createLogger } from '../../infra/log/logger.js';
import { buildNode, type AppNode } from '../../src/app/node.js';
import { createHttpApp } from '../../src/app/http-app.js';
import { ROUTE_MODULES } from '../../src/app/route-modules.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { buildScenario, G1, P, UP, project } from './readmodels-scenario.js';

const LIMIT = 40;
const NOW = 1_717_171_717_171;

/** Valid list GETs of every route front answers. */
const LISTS = [
  '/v1/events?eventName=PaymentRecord',
  '/v1/events?eventName=PaymentRecord&limit=2&offset=1',
  '/v1/events?trackingId=order-1',
  '/v1/events?slot=10005',
  '/v1/events?minSlot=10000&maxSlot=10100&limit=3',
  '/v1/events/count?eventName=PaymentRecord',
  '/v1/events/names',
  '/v1/events/payments/stats',
  `/v1/events/payments/stats?gateway=${G1}`,
  `/v1/events/payments?gateway=${G1}`,
  '/v1/events/typed/PaymentRecord?limit=3',
  '/v1/events/typed/PolicyCreated',
  `/v1/subscriptions?gatewayPublicKey=${G1}`,
  `/v1/payment-policies?gatewayPublicKey=${G1}&limit=1`,
  `/v1/payment-policies?userPublicKey=${UP.w1usdc}`,
  `/v1/payment-policies/${P.sub1}/executions`,
  `/v1/composable-policies/${P.comp1}/executions?limit=1`,
  '/v1/onetime/order-1',
  '/v1/onetime/nobody%20here',
];

/**
 * Valid list GETs spelled as the router reads them too, which front answers alike: another
 * case, a trailing slash, a param with an encoded letter, slash or non-ASCII character.
 */
const SPELLED = [
  '/V1/EVENTS?eventName=PaymentRecord',
  '/v1/Events/Typed/PaymentRecord?limit=3',
  '/v1/events/?eventName=PaymentRecord',
  '/v1/events/typed/PaymentRecord/?limit=3',
  '/v1/events/typed/Payment%52ecord?limit=3',
  '/v1/ONETIME/order-1',
  '/v1/onetime/order%2D1',
  '/v1/onetime/order%2d1/',
  '/v1/onetime/a%2Fb',
  '/v1/onetime/caf%C3%A9',
  '/v1/onetime/%F0%9F%92%B8',
];

/** Bad input, and URLs no route matches or front leaves to express (an escape that does not decode): each answered as express answers it. */
const REFUSED = [
  '/v1/events?eventName=PaymentRecord&limit=abc',
  '/v1/events?eventName=Nope',
  '/v1/events?unknown=1',
  '/v1/events?limit=0x10',
  '/v1/events?startTime=2024-02-01&endTime=2024-01-01',
  '/v1/events?signature=5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFXBV6bNfKpbG9ZDe',
  '/v1/payment-policies/not-an-address/executions',
  '/v1/payment-policies',
  `/v1/payment-policies?gatewayPublicKey=${G1}&recipient=x`,
  '/v1/onetime/%E0%A4%A',
  '/v1/onetime/%C3',
  '/v1/onetime/order-1%',
  '/v1/events/typed/%ZZ',
  '/v1//events',
  '//v1/events',
  '/v1/events//',
  '/v1/events%2Fnames',
  '/v1/events%2fnames',
  '/v1/onetime/',
  '/v1/onetime//',
  '/v1/onetime/a/b',
  '/v1/events/typed/PaymentRecord/extra',
  '/v1/events/typed/Nope',
  '/v1/nothing-here',
];

/** The headers that may differ between two answers to the same request. */
const VARYING = new Set(['date', 'ratelimit', 'keep-alive', 'connection']);
const stable = (res: Response) => Object.fromEntries([...res.headers].filter(([k]) => !VARYING.has(k)));
/** An error's headers and body but for its moment: the envelope's timestamp (the wall clock's) and the ETag express hashes over it. */
const errorHeaders = (res: Response) => Object.fromEntries(Object.entries(stable(res)).filter(([k]) => k !== 'etag'));
const errorBody = (body: string) => body.replace(/"timestamp":\d+/, '"timestamp":0');

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

for (const ttl of ['0', '60000']) {
  describe(`list routes answered in front of express (READ_CACHE_TTL_MS=${ttl})`, function () {
    this.timeout(60_000);
    let env: TestEnv;
    let node: AppNode;
    let front: { server: Server; url: string };
    let plain: { server: Server; url: string };
    /** requests express handled, by the x-via header the test sends */
    const reached: string[] = [];
    let ipSeq = 0;
    const nextIp = () => `198.51.100.${++ipSeq}`;

    const get = (base: string, path: string, ip: string, via: string) =>
      fetch(`${base}${path}`, { headers: { 'x-forwarded-for': ip, 'x-request-id': 'req-front-1', origin: 'https://shop.example', 'x-via': via } });
    const served = async (route: string): Promise<number> => {
      const m = await node.metrics.httpDuration.get();
      return m.values.filter((v) => v.metricName?.endsWith('_count') && v.labels['route'] === route).reduce((n, v) => n + v.value, 0);
    };

    /** The same GET through the node's handler and through express alone, from two fresh clients. */
    async function both(path: string): Promise<{ viaFront: Response; viaExpress: Response; frontBody: string; expressBody: string }> {
      const viaExpress = await get(plain.url, path, nextIp(), 'express');
      const expressBody = await viaExpress.text();
      const viaFront = await get(front.url, path, nextIp(), 'front');
      const frontBody = await viaFront.text();
      return { viaFront, viaExpress, frontBody, expressBody };
    }

    before(async () => {
      env = await createTestEnv(`front-misses-${ttl}`);
      await project(env, PROJECTIONS.filter((p) => p !== archiveProjection).concat(archiveProjection), buildScenario());
      const config = loadConfig({
        ...env.env, PORT: '0', HOST: '127.0.0.1', READ_CACHE_TTL_MS: ttl, RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUST_PROXY: 'loopback', CORS_ORIGINS: 'https://shop.example',
      });
      const ctx: AppContext = { config, db: env.db, dbRead: env.db, redis: env.redis, keys: env.keys, logger: createLogger('silent', 'test-api'), clock: { now: () => NOW } };
      node = buildNode(ctx);
      const { app, handler } = createHttpApp(node, ROUTE_MODULES);
      // express's app calls its handle(); a request that reaches it is one front handed on
      const routed = app as unknown as { handle(req: IncomingMessage, res: ServerResponse, next?: () => void): void };
      const handle = routed.handle.bind(app);
      routed.handle = (req, res, next) => {
        reached.push(String(req.headers['x-via']));
        handle(req, res, next);
      };
      front = await listen(handler);
      plain = await listen(app);
    });
    after(async () => {
      for (const s of [front, plain]) await new Promise<void>((resolve) => { s?.server.close(() => resolve()); s?.server.closeAllConnections(); });
      await node?.keyRing.close();
      await env?.close();
    });

    it('answers every list route with the status, headers and bytes express answers, without express', async () => {
      for (const path of [...LISTS, ...SPELLED]) {
        reached.length = 0;
        const { viaFront, viaExpress, frontBody, expressBody } = await both(path);
        expect(viaFront.status, path).to.equal(200);
        expect(viaExpress.status, path).to.equal(200);
        expect(stable(viaFront), path).to.deep.equal(stable(viaExpress));
        expect(viaFront.headers.get('ratelimit'), path).to.match(/^limit=40, remaining=39, reset=\d+$/);
        expect(frontBody, path).to.equal(expressBody);
        expect(reached, path).to.deep.equal(['express']);
      }
    });

    it('leaves bad input to express, which refuses it as always and counts it once', async () => {
      for (const path of REFUSED) {
        const { viaFront, viaExpress, frontBody, expressBody } = await both(path);
        expect(viaFront.status, path).to.equal(viaExpress.status);
        expect(viaFront.status === 200 ? frontBody : errorBody(frontBody), path).to.equal(viaFront.status === 200 ? expressBody : errorBody(expressBody));
        expect(errorHeaders(viaFront), path).to.deep.equal(errorHeaders(viaExpress));
        expect(viaFront.headers.has('ratelimit'), path).to.equal(viaExpress.headers.has('ratelimit'));
        if (viaExpress.headers.has('ratelimit')) expect(viaFront.headers.get('ratelimit'), path).to.match(/remaining=39,/);
      }
    });

    it('counts each request once, answers and refusals alike, and refuses past the limit as express does', async () => {
      const ip = nextIp();
      const remaining: string[] = [];
      for (let i = 0; i < LIMIT; i++) {
        const path = i % 4 === 3 ? '/v1/events?limit=abc' : `/v1/events?eventName=PaymentRecord&limit=${(i % 3) + 1}`;
        const res = await get(front.url, path, ip, 'front');
        await res.arrayBuffer();
        remaining.push(/remaining=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1] ?? '-');
      }
      expect(remaining).to.deep.equal(Array.from({ length: LIMIT }, (_, i) => String(LIMIT - 1 - i)));
      const refused = await get(front.url, '/v1/events?eventName=PaymentRecord', ip, 'front');
      const express = nextIp();
      for (let i = 0; i < LIMIT; i++) await (await get(plain.url, '/v1/events?eventName=PaymentRecord', express, 'express')).arrayBuffer();
      const expected = await get(plain.url, '/v1/events?eventName=PaymentRecord', express, 'express');
      expect(refused.status).to.equal(429);
      expect(errorHeaders(refused)).to.deep.equal(errorHeaders(expected));
      expect(errorBody(await refused.text())).to.equal(errorBody(await expected.text()));
    });

    it('names the route in the request\'s metrics, answered or refused by its handler', async () => {
      const route = '/v1/payment-policies/:address/executions';
      const before = await served(route);
      await (await get(front.url, `/v1/payment-policies/${P.sub1}/executions?limit=2`, nextIp(), 'front')).arrayBuffer();
      expect(await served(route)).to.equal(before + 1);
      // the handler's own 400 (checkAddress), answered by express's error handler
      const bad = await get(front.url, '/v1/payment-policies/not-an-address/executions', nextIp(), 'front');
      expect(bad.status).to.equal(400);
      expect(await served(route)).to.equal(before + 2);
      // a 404 the handler throws after front counted the request
      const events = await served('/v1/events');
      const missing = await get(front.url, REFUSED.find((p) => p.includes('signature='))!, nextIp(), 'front');
      expect(missing.status).to.equal(404);
      expect(await served('/v1/events')).to.equal(events + 1);
    });
  });
}
