/**
 * Route definitions: one schema per request part and response, used by ajv to validate
 * and by the OpenAPI document to describe. A route is declared once, here, and both
 * express and /openapi.yaml learn it from that declaration.
 */
import type { Request, RequestHandler, Response, Router } from 'express';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { errorEnvelopeSchema } from './envelope.js';
import { invalid } from './errors.js';
import type { JsonSchema } from './schema.js';
import type { RouteRateLimit } from './rate-limit.js';

type Method = 'get' | 'post' | 'put' | 'delete' | 'patch';

export interface Reply {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
  /** default application/json */
  contentType?: string;
}

export interface Ctx<Q, P, B> { query: Q; params: P; body: B; req: Request; res: Response }

export interface RouteDef<Q = Record<string, never>, P = Record<string, never>, B = undefined> {
  method: Method;
  /** express path, e.g. /v1/webhooks/:id */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  security?: Record<string, string[]>[];
  /** status → description and schema (JSON) or content type (text) */
  responses: Record<number, { description: string; schema?: JsonSchema; contentType?: string; headers?: Record<string, JsonSchema> }>;
  /** middleware that runs before validation (rate limits, auth) */
  before?: RequestHandler[];
  /** which rate limit the route lives under (src/http/rate-limit.ts); default 'standard' */
  rateLimit?: RouteRateLimit;
  handler(ctx: Ctx<Q, P, B>): Promise<Reply | undefined>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export class Api {
  private readonly ajv: Ajv;
  private readonly paths: Record<string, Record<string, unknown>> = {};

  constructor(
    private readonly router: Router,
    private readonly info: { title: string; version: string; description: string },
    /** the standard rate limit, run first on every route declared with rateLimit 'standard' */
    private readonly standardLimit?: RequestHandler,
  ) {
    this.ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, strict: false });
    addFormats(this.ajv);
  }

  route<Q = Record<string, never>, P = Record<string, never>, B = undefined>(def: RouteDef<Q, P, B>): void {
    const vQuery = def.query ? this.ajv.compile(def.query) : undefined;
    const vParams = def.params ? this.ajv.compile(def.params) : undefined;
    const vBody = def.body ? this.ajv.compile(def.body) : undefined;
    const handler: RequestHandler = async (req, res, next) => {
      try {
        const rawQuery = { ...(req.query as Record<string, unknown>) };
        const rawParams: Record<string, unknown> = { ...req.params };
        checkSpelling(def.query, rawQuery, 'query');
        checkSpelling(def.params, rawParams, 'path');
        const query = validate(vQuery, rawQuery, 'query');
        const params = validate(vParams, rawParams, 'path');
        const body = vBody ? validate(vBody, req.body ?? {}, 'body') : undefined;
        const reply = await def.handler({ query: query as Q, params: params as P, body: body as B, req, res });
        if (!reply || res.headersSent) return;
        if (reply.headers) res.set(reply.headers);
        res.status(reply.status ?? 200);
        if (reply.contentType && !reply.contentType.startsWith('application/json')) res.type(reply.contentType).send(reply.body);
        else res.json(reply.body);
      } catch (err) {
        next(err);
      }
    };
    const limit = (def.rateLimit ?? 'standard') === 'standard' && this.standardLimit ? [this.standardLimit] : [];
    this.router[def.method](def.path, ...limit, ...(def.before ?? []), handler);
    this.document(def);
  }

  private document<Q, P, B>(def: RouteDef<Q, P, B>): void {
    const path = def.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const parameters = [
      ...schemaParams(def.params, 'path'),
      ...schemaParams(def.query, 'query'),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(def.responses)) {
      const content = r.contentType
        ? { [r.contentType]: { schema: r.schema ?? { type: 'string' } } }
        : r.schema ? { 'application/json': { schema: r.schema } } : undefined;
      responses[status] = { description: r.description, ...(content ? { content } : {}), ...(r.headers ? { headers: Object.fromEntries(Object.entries(r.headers).map(([k, s]) => [k, { schema: s }])) } : {}) };
    }
    if ((def.rateLimit ?? 'standard') === 'standard' && this.standardLimit && !responses['429']) {
      responses['429'] = { description: 'standard rate limit per client IP exceeded (RATE_LIMIT_PER_MINUTE, across all nodes); Retry-After gives the seconds to wait', headers: { 'Retry-After': { schema: { type: 'integer' } } } };
    }
    responses['default'] = { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    (this.paths[path] ??= {})[def.method] = {
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      tags: def.tags,
      ...(parameters.length ? { parameters } : {}),
      ...(def.body ? { requestBody: { required: true, content: { 'application/json': { schema: def.body } } } } : {}),
      ...(def.security ? { security: def.security } : {}),
      responses,
    };
  }

  openapi(servers: { url: string; description: string }[]): Record<string, unknown> {
    return {
      openapi: '3.0.3',
      info: this.info,
      servers,
      paths: this.paths,
      components: {
        schemas: { Error: errorEnvelopeSchema },
        securitySchemes: {
          AdminApiKey: { type: 'apiKey', in: 'header', name: 'x-admin-key' },
          BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    };
  }
}

/**
 * ajv coerces strings the way JavaScript does ("0x10" → 16, " " → 0). Query and path
 * values of integer or boolean type must be spelled plainly; anything else is a 400.
 */
function checkSpelling(schema: JsonSchema | undefined, data: Record<string, unknown>, where: string): void {
  const props = (schema?.['properties'] ?? {}) as Record<string, JsonSchema>;
  for (const [name, value] of Object.entries(data)) {
    const type = props[name]?.['type'];
    if (typeof value !== 'string') continue;
    if (type === 'integer' && !/^-?\d{1,16}$/.test(value)) throw invalid(`${where} '${name}' must be an integer`);
    if (type === 'boolean' && !/^(true|false)$/.test(value)) throw invalid(`${where} '${name}' must be true or false`);
  }
}

function validate(v: ValidateFunction | undefined, data: unknown, where: string): unknown {
  if (!v) return data;
  if (v(data)) return data;
  const e = v.errors?.[0];
  const field = e?.instancePath ? e.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
  const what = e?.keyword === 'additionalProperties'
    ? `unknown ${where} parameter '${String((e.params as { additionalProperty?: string }).additionalProperty)}'`
    : e?.keyword === 'required'
      ? `missing ${where} field '${String((e.params as { missingProperty?: string }).missingProperty)}'`
      : `${where}${field ? ` '${field}'` : ''} ${e?.message ?? 'is invalid'}`;
  throw invalid(what);
}

function schemaParams(schema: JsonSchema | undefined, where: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const props = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema['required'] ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(typeof s['description'] === 'string' ? { description: s['description'] } : {}),
    schema: s,
  }));
}
