/**
 * A route's JSON reply as bytes: rendered once (and kept by the read cache when the route
 * is cached), written as often as needed with one `res.end`.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

export type Reply = {
  status?: number;
  headers?: Record<string, string>;
} & (
  | {
    body: unknown;
    /** default application/json */
    contentType?: string;
  }
  | {
    /** the body as JSON text already (rendered by Postgres, say): written as it is */
    json: string;
    /** true: json is the data of SPEC's success envelope, wrapped at send time with that moment's timestamp */
    envelope?: boolean;
  }
);

/** A JSON reply as bytes, ready to send as often as needed. */
export interface Rendered {
  status: number;
  headers: Record<string, string> | undefined;
  /** the whole body, or the envelope's data when envelope is set */
  body: Buffer;
  envelope: boolean;
  /** of a whole cached body (an envelope's timestamp changes with every send) */
  etag: string | undefined;
}

/** `tagged`: the body is kept and sent many times, worth an ETag (one hash) for revalidation. */
export function render(reply: Reply | undefined, path: string, tagged: boolean): Rendered {
  if (!reply) throw new Error(`route ${path}: a handler that writes its own response cannot be cached`);
  const envelope = 'json' in reply && reply.envelope === true;
  const body = Buffer.from('json' in reply ? reply.json : JSON.stringify(reply.body) ?? 'null', 'utf8');
  const status = reply.status ?? 200;
  const etag = !tagged || envelope || status !== 200 ? undefined : `W/"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').slice(0, 27)}"`;
  return { status, headers: reply.headers, body, envelope, etag };
}

const ENVELOPE_HEAD = Buffer.from('{"success":true,"data":');

/**
 * Writes a rendered reply: the envelope wrapped around its data with this moment's
 * timestamp, or the whole body with its ETag (a client sending If-None-Match gets 304).
 */
export function send(req: Request, res: Response, r: Rendered, now: number): void {
  if (r.headers) res.set(r.headers);
  res.status(r.status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (r.etag) {
    res.setHeader('ETag', r.etag);
    if (req.fresh) { res.status(304).end(); return; }
  }
  const body = r.envelope ? Buffer.concat([ENVELOPE_HEAD, r.body, Buffer.from(`,"timestamp":${now}}`)]) : r.body;
  res.setHeader('Content-Length', body.length);
  res.end(req.method === 'HEAD' ? undefined : body);
}
