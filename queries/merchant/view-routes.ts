/**
 * The merchant's view, under the gateway JWT (or x-admin-key):
 *   GET /v1/gateway/{gateway}/merchant/subscribers
 *   GET /v1/gateway/{gateway}/merchant/revenue
 *   GET /v1/gateway/{gateway}/merchant/export/{payments|policies|subscribers|revenue}
 * Answers come from the merchant read model (projections/merchant); exports stream from
 * a cursor (export-writer.ts).
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Api } from '../../infra/http/routes.js';
import { requireGatewayToken, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import { envelope } from '../../src/kernel/http/envelope.js';
import { AppError, invalid, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { LIFECYCLE_VERSION, MERCHANT_PROJECTION } from '../../src/kernel/names/index.js';
import type { Bucket } from '../../src/kernel/domain/buckets.js';
import { parseTime } from '../events/params.js';
import { listSubscribers, type SubscriberStatus } from './subscribers.js';
import { defaultFrom, revenueSeries } from './revenue.js';
import { exportSource, type ExportKind } from './exports.js';
import { writeExport, type ExportFormat } from './export-writer.js';
import { overview } from './overview.js';
import * as s from './view-schemas.js';

const AUTH_TEXT = 'Bearer: a gateway JWT for this gateway (/v1/gateway/{gateway}/auth/verify), or x-admin-key. None or invalid: 401; another gateway\'s token: 403.';
const SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }, { AdminApiKey: [] }];
const ERRORS = {
  400: { description: 'invalid parameter' },
  401: { description: 'no credential, or an invalid or expired one' },
  403: { description: "another gateway's token, or not a gateway token" },
  503: { description: 'read model unavailable' },
};

const unavailable = (err: unknown): never => {
  if (err instanceof AppError) throw err;
  throw upstreamUnavailable('merchant read model unavailable');
};

function range(from: string | undefined, to: string | undefined): { from?: number; to?: number } {
  const r: { from?: number; to?: number } = {};
  if (from !== undefined) r.from = Math.ceil(parseTime(from, 'from'));
  if (to !== undefined) r.to = Math.floor(parseTime(to, 'to'));
  if (r.from !== undefined && r.to !== undefined && r.from > r.to) throw invalid('from is after to');
  return r;
}

export function fileName(kind: ExportKind, gateway: string, format: ExportFormat, now: Date): string {
  return `tributary-${kind}-${gateway.slice(0, 8)}-${now.toISOString().slice(0, 10)}.${format === 'csv' ? 'csv' : 'ndjson'}`;
}

export interface MerchantViewDeps { dbRead: Db; logger: Logger; clock: Clock; keyRing: TokenVerifier; gatewayKeys: GatewayLookup; config: Pick<Config, 'keys' | 'http'> }

export function registerMerchantViewRoutes(api: Api, ctx: MerchantViewDeps): void {
  const auth = requireGatewayToken(ctx.keyRing, { adminKey: ctx.config.keys.adminApiKey, keys: ctx.gatewayKeys });
  const db = ctx.dbRead;

  api.route<{ limit: number; offset: number; status?: SubscriberStatus; tokenMint?: string }, { gateway: string }>({
    method: 'get', path: '/v1/gateway/:gateway/merchant/subscribers',
    summary: "The gateway's subscribers: one per payer wallet and mint",
    description: `${AUTH_TEXT} Ordered by payer, then mint.`,
    tags: ['merchant'], security: SECURITY, before: [auth],
    params: s.gatewayParams, query: s.subscribersQuerySchema(ctx.config.http.maxLimit),
    // past-due flags come from the scheduler's lifecycle events
    cachedFrom: [MERCHANT_PROJECTION, LIFECYCLE_VERSION],
    responses: { 200: { description: 'page of subscribers', schema: s.subscribersResponse }, ...ERRORS },
    async handler({ params, query }) {
      const page = await listSubscribers(db, params.gateway, query).catch(unavailable);
      return { body: envelope(page) };
    },
  });

  api.route<{ bucket: Bucket; from?: string; to?: string; tokenMint?: string }, { gateway: string }>({
    method: 'get', path: '/v1/gateway/:gateway/merchant/revenue',
    summary: 'Revenue and MRR per day, week or month (UTC)',
    description: `${AUTH_TEXT} Gross (what payers paid), gateway fee, protocol fee and net (what recipients received) as exact decimal strings, per PROGRAM.md's fee rules; one entry per bucket in range, zeros where nothing happened.`,
    tags: ['merchant'], security: SECURITY, before: [auth],
    params: s.gatewayParams, query: s.revenueQuerySchema,
    // the default range follows the clock by whole buckets; READ_CACHE_TTL_MS bounds that
    cachedFrom: [MERCHANT_PROJECTION],
    responses: { 200: { description: 'one series per mint', schema: s.revenueResponse }, ...ERRORS },
    async handler({ params, query }) {
      const r = range(query.from, query.to);
      const to = r.to ?? Math.floor(Date.now() / 1000);
      const from = r.from ?? defaultFrom(query.bucket, to);
      if (from > to) throw invalid('from is after to');
      const answer = await revenueSeries(db, params.gateway, { bucket: query.bucket, from, to, ...(query.tokenMint ? { tokenMint: query.tokenMint } : {}) }).catch(unavailable);
      return { body: envelope(answer) };
    },
  });

  api.route<Record<string, never>, { gateway: string }>({
    method: 'get', path: '/v1/gateway/:gateway/merchant/overview',
    summary: 'The dashboard panels: MRR now, latest payments, renewals due next, webhook health',
    description: `${AUTH_TEXT} Renewals are the Active policies with the earliest next due dates (from a day ago on). Past-due flags are on the subscribers (from the scheduler's lifecycle events).`,
    tags: ['merchant'], security: SECURITY, before: [auth],
    params: s.gatewayParams, query: { type: 'object', additionalProperties: false, properties: {} },
    responses: { 200: { description: 'the panels', schema: s.overviewResponse }, ...ERRORS },
    async handler({ params }) {
      const answer = await overview(db, params.gateway, Math.floor(ctx.clock.now() / 1000)).catch(unavailable);
      return { body: envelope(answer) };
    },
  });

  api.route<{ format: ExportFormat; tokenMint?: string; status?: SubscriberStatus; from?: string; to?: string; bucket: Bucket }, { gateway: string; kind: ExportKind }>({
    method: 'get', path: '/v1/gateway/:gateway/merchant/export/:kind',
    summary: 'Export payments, policies, subscribers or revenue as CSV or NDJSON',
    description: `${AUTH_TEXT} Streamed from a database cursor as the client reads it (never held whole), with a Content-Disposition file name. CSV: a header line, RFC 4180 quoting, text that would start a spreadsheet formula prefixed with an apostrophe.`,
    tags: ['merchant'], security: SECURITY, before: [auth],
    params: s.exportParams, query: s.exportQuerySchema,
    responses: {
      200: { description: 'the rows', contentType: 'text/csv', headers: { 'Content-Disposition': { type: 'string' } } },
      ...ERRORS,
    },
    async handler({ params, query, res }) {
      const filter = { ...range(query.from, query.to), bucket: query.bucket,
        ...(query.tokenMint ? { tokenMint: query.tokenMint } : {}), ...(query.status ? { status: query.status } : {}) };
      if (query.status !== undefined && params.kind !== 'subscribers') throw invalid('status applies to the subscribers export only');
      const source = exportSource(db, params.kind, params.gateway, filter);
      res.status(200);
      res.setHeader('Content-Type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="${fileName(params.kind, params.gateway, query.format, new Date())}"`);
      res.setHeader('Cache-Control', 'no-store');
      try {
        await writeExport(res, query.format, source.columns, source.rows, source.cells);
      } catch (err) {
        // before the first chunk the error handler still answers with the envelope
        if (!res.headersSent) unavailable(err);
        ctx.logger.warn({ err: (err as Error).message }, 'merchant export failed mid-stream');
        res.destroy();
      }
      return undefined;
    },
  });
};
