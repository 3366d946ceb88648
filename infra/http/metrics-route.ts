/**
 * GET /metrics (Prometheus text). It shows the service's insides (routes, lags, queue
 * depths), so it can be kept from the public: METRICS_TOKEN asks scrapers for
 * `Authorization: Bearer <token>` (compared in constant time), and METRICS_PORT serves it
 * on a listener of its own (METRICS_HOST, loopback by default) instead of the API port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { adminKeyMatches } from '../../src/kernel/auth/admin-key.js';
import { errorEnvelope } from '../../src/kernel/http/envelope.js';

/** true when the Authorization header carries the token (or no token is configured) */
function authorized(token: string | undefined, header: string | undefined): boolean {
  if (token === undefined || token === '') return true;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return adminKeyMatches(token, m?.[1]);
}

export function metricsHandler(registry: Registry, token: string | undefined): RequestHandler {
  return async (req, res, next) => {
    try {
      if (!authorized(token, req.get('authorization'))) {
        res.status(401).set('WWW-Authenticate', 'Bearer').json(errorEnvelope('/metrics requires Authorization: Bearer <METRICS_TOKEN>', 'unauthorized'));
        return;
      }
      res.type(registry.contentType).send(await registry.metrics());
    } catch (err) {
      next(err);
    }
  };
}

function loopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/**
 * Why /metrics is open to the network, or undefined when it is not: no METRICS_TOKEN, and
 * served on the API port of an interface other than loopback (METRICS_PORT=0) or on a
 * METRICS_PORT whose METRICS_HOST is not loopback. It stays open by default; the node says so at start.
 */
export function metricsExposure(m: { port: number; host: string; token: string | undefined }, apiHost: string): string | undefined {
  if (m.token !== undefined && m.token !== '') return undefined;
  if (m.port === 0 && !loopback(apiHost)) {
    return `/metrics is served without METRICS_TOKEN on the API port (HOST ${apiHost}): anyone who reaches the API reads the service's insides; set METRICS_TOKEN, or METRICS_PORT to serve it on a listener of its own (METRICS_HOST, loopback by default)`;
  }
  if (m.port !== 0 && !loopback(m.host)) {
    return `/metrics is served without METRICS_TOKEN on METRICS_HOST ${m.host}:${m.port}: anyone who reaches that interface reads the service's insides; set METRICS_TOKEN, or bind METRICS_HOST to a private interface`;
  }
  return undefined;
}

/** The METRICS_PORT listener: /metrics and nothing else. */
export async function startMetricsServer(registry: Registry, opts: { port: number; host: string; token: string | undefined }): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(errorEnvelope('only GET /metrics here', 'not_found')));
      return;
    }
    if (!authorized(opts.token, req.headers.authorization)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end(JSON.stringify(errorEnvelope('/metrics requires Authorization: Bearer <METRICS_TOKEN>', 'unauthorized')));
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
