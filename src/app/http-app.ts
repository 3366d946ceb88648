/**
 * The HTTP application: express 5 with request ids, structured logs, security headers,
 * CORS, a body limit, every route module, the OpenAPI document, and one error handler
 * that maps typed errors to SPEC's error envelope and never shows a 5xx message.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express } from 'express';
import helmet from 'helmet';
import proxyaddr from 'proxy-addr';
import { stringify } from 'yaml';
import { errorEnvelope } from '../kernel/http/envelope.js';
import { AppError } from '../kernel/http/errors.js';
import { Api } from '../../infra/http/routes.js';
import { clientKey, standardRateLimit } from '../../infra/http/rate-limit.js';
import { servedRoute, type NodeMiddleware } from '../../infra/http/cached-hits.js';
import { metricsHandler } from '../../infra/http/metrics-route.js';
import { jsonDepthGuard } from '../../infra/http/json-depth.js';
import { crossOriginPolicy } from '../../infra/http/cors.js';
import { createReadCache } from '../../infra/cache/read-cache.js';
import { registerSpineGauges } from '../../queries/metrics/spine-gauges.js';
import { registerSchedulerGauges } from '../../commands/scheduler/gauges.js';
import { registerExactGauges } from '../../commands/x402/exact/gauges.js';
import { registerReconciliationGauges } from '../../queries/reconciliation/published.js';
import type { AppNode, RouteModule } from './node.js';
export { API_VERSION } from '../kernel/http/version.js';
import { API_VERSION } from '../kernel/http/version.js';

export type { RouteModule };

/**
 * `handler` is what the node's HTTP server runs: the express app, with the read cache's
 * hits of known URLs answered in front of it (cached-hits.ts) when the cache is on.
 */
export function createHttpApp(ctx: AppNode, modules: readonly RouteModule[]): { app: Express; api: Api; handler: (req: IncomingMessage, res: ServerResponse) => void } {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', parseTrustProxy(ctx.config.http.trustProxy));
  app.set('query parser', 'simple');

  // A request id (the caller's when well-formed), and one 'finish' listener per request
  // for its log line and its latency histogram. A log line is built only when its level
  // is enabled: successes log at debug, 4xx at info, 5xx at error. Node's request and
  // response only: a cached hit runs it before express (cached-hits.ts).
  const { metrics } = ctx;
  registerSpineGauges(metrics.registry, ctx);
  registerSchedulerGauges(metrics.registry, ctx);
  registerExactGauges(metrics.registry, ctx);
  registerReconciliationGauges(metrics.registry, ctx);
  const requestId: NodeMiddleware = (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', id);
    (req as { id?: string }).id = id;
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = res.statusCode;
      metrics.httpDuration.observe({ method: req.method ?? '', route: servedRoute(req, res) ?? 'unmatched', status: String(status) }, seconds);
      const level = status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
      if (!ctx.logger.isLevelEnabled(level)) return;
      ctx.logger[level]({
        req: { id, method: req.method, url: (req as { originalUrl?: string }).originalUrl ?? req.url },
        res: { statusCode: status },
        responseTime: Math.round(seconds * 1000),
      }, 'request completed');
    });
    next();
  };
  const security: NodeMiddleware = helmet({ contentSecurityPolicy: false });
  // CORS_ORIGINS (the service's own origin by default), a fixed list of allowed headers, never x-admin-key (cors.ts)
  const crossOrigin: NodeMiddleware = crossOriginPolicy(ctx.config.http.corsOrigins);
  app.use(requestId);
  // on its own listener when METRICS_PORT is set (api-server.ts), else here
  if (ctx.config.metrics.port === 0) app.get('/metrics', metricsHandler(metrics.registry, ctx.config.metrics.token));
  app.use(security);
  app.use(crossOrigin);
  app.use(express.json({ limit: ctx.config.http.bodyLimit, type: ['application/json', 'application/*+json'] }));
  app.use(jsonDepthGuard(ctx.config.http.maxJsonDepth));

  const router = express.Router();
  const limit = standardRateLimit(ctx);
  const standardLimit = limit.middleware;
  // express's req.ip, for requests answered before express
  const trust = app.get('trust proxy fn') as Parameters<typeof proxyaddr>[1];
  const cache = createReadCache(ctx.redis, {
    ttlMs: ctx.config.http.readCacheTtlMs,
    maxBytes: ctx.config.http.readCacheMaxMb * 1024 * 1024,
    keys: ctx.keys,
    outcomes: metrics.readCache,
  });
  const api = new Api(router, {
    title: 'Tributary payment service',
    version: API_VERSION,
    description: 'Subscription and pay-per-request payments on Solana: HTTP 402 protocol, REST API, webhooks, WebSocket notifications.',
  }, {
    standardLimit,
    cache,
    now: () => ctx.clock.now(),
    front: {
      headers: [requestId, security, crossOrigin],
      clientOf: (req) => clientKey(proxyaddr(req, trust)),
      count: (client) => limit.count(client),
    },
  });
  for (const register of modules) register(api, ctx);
  const hits = api.cachedHits();
  if (hits) app.use(hits);
  app.use(router);

  const doc = stringify(api.openapi([{ url: ctx.config.http.publicUrl ?? `http://localhost:${ctx.config.http.port}`, description: 'this node' }]), { aliasDuplicateObjects: false });
  app.get('/openapi.yaml', standardLimit, (_req, res) => { res.type('application/yaml').send(doc); });

  app.use((req, res) => {
    res.status(404).json(errorEnvelope(`no route for ${req.method} ${req.path}`, 'not_found'));
  });
  app.use(errorHandler(ctx));
  return { app, api, handler: api.handler(app) };
}

function errorHandler(ctx: Pick<AppNode, 'logger'>): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    const e = toAppError(err);
    if (e.status >= 500 && e.kind !== 'upstream_unavailable') ctx.logger.error({ err, reqId: (req as { id?: string }).id }, 'request failed');
    res.set(e.headers);
    // a 503 is the service asking to be asked again: it always says when
    if (e.status === 503 && !res.get('Retry-After')) res.set('Retry-After', String(RETRY_AFTER_SECONDS));
    const message = e.kind === 'internal' ? 'internal error' : e.message;
    res.status(e.status).json(errorEnvelope(message, e.kind));
  };
}

/** Seconds a 503 asks the caller to wait when its error named none. */
const RETRY_AFTER_SECONDS = 2;

/** PostgreSQL or Redis out of reach (a restart, a full pool): nothing was done, the caller may ask again. */
function storeUnreachable(err: unknown): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03'].includes(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && /timeout exceeded when trying to connect|Connection terminated|Connection is closed|max retries per request/i.test(message);
}

/** Body-parser and express errors carry a status; a store out of reach is a 503; anything else is internal. */
function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; type?: string; message?: string };
  if (storeUnreachable(err)) return new AppError('upstream_unavailable', 'a backing store did not answer; ask again');
  // the read pool's statement timeout (query_canceled): the service's limit, not the caller's error
  if ((err as { code?: unknown }).code === '57014') return new AppError('upstream_unavailable', 'the query took too long; narrow the filters');
  if (e.type === 'entity.too.large') return new AppError('payload_too_large', 'request body too large');
  if (e.type === 'entity.parse.failed') return new AppError('invalid_input', 'request body is not valid JSON');
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return new AppError('invalid_input', 'unsupported body encoding');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return new AppError('invalid_input', e.message ?? 'bad request');
  return new AppError('internal', 'internal error');
}

function parseTrustProxy(v: string): boolean | number | string {
  if (v === 'true') return true;
  if (v === 'false' || v === '') return false;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
}
