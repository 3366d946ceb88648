/**
 * A route's JSON reply as bytes: rendered once (and kept by the read cache when the route
 * is cached), written as often as needed with one `res.end`.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
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
    /** the body as JSON text already (rendered by Postgres, say), as a string or as its UTF-8 bytes: written as it is */
    json: string | Buffer;
    /** true: json is the data of SPEC's success envelope, wrapped at send time with that moment's timestamp */
    envelope?: boolean;
  }
);

/** A JSON reply as bytes, ready to send as often as needed. */
export interface Rendered {
  status: number;
  headers: Record<string, string> | undefined;
  /** the whole body, or when envelope is set the envelope up to the end of its data (the timestamp follows at send time) */
  body: Buffer;
  envelope: boolean;
  /** of a whole cached body (an envelope's timestamp changes with every send) */
  etag: string | undefined;
}

/** `tagged`: the body is kept and sent many times, worth an ETag (one hash) for revalidation. */
export function render(reply: Reply | undefined, path: string, tagged: boolean): Rendered {
  if (!reply) throw new Error(`route ${path}: a handler that writes its own response cannot be cached`);
  const envelope = 'json' in reply && reply.envelope === true;
  const text = 'json' in reply ? reply.json : JSON.stringify(reply.body) ?? 'null';
  const body = typeof text !== 'string'
    ? (envelope ? Buffer.concat([ENVELOPE_HEAD_BYTES, text]) : text)
    : utf8(envelope ? ENVELOPE_HEAD + text : text);
  const status = reply.status ?? 200;
  const etag = !tagged || envelope || status !== 200 ? undefined : `W/"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').slice(0, 27)}"`;
  return { status, headers: reply.headers, body, envelope, etag };
}

const ENVELOPE_HEAD = '{"success":true,"data":';
const ENVELOPE_HEAD_BYTES = Buffer.from(ENVELOPE_HEAD, 'latin1');

/**
 * A string's UTF-8 bytes. Pages are ASCII but for the odd memo or name, and for ASCII
 * Latin-1 is the same bytes, which Node copies out of a one-byte string several times
 * faster than it encodes UTF-8 (a 58 KB page: about 15 µs against 110 µs); the length
 * check that proves it ASCII is a fast scan.
 */
function utf8(s: string): Buffer {
  return Buffer.from(s, Buffer.byteLength(s, 'utf8') === s.length ? 'latin1' : 'utf8');
}

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
  writeBody(res, r, now, req.method === 'HEAD');
}

/**
 * `send` for a plain GET outside express (cached-hits.ts's hits answered before it): the
 * same status, headers and bytes, for a reply with no headers of its own (r.headers) and a
 * request that asks no revalidation (If-None-Match), the two things only express's
 * helpers above handle.
 */
export function sendPlain(res: ServerResponse, r: Rendered, now: number): void {
  res.statusCode = r.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (r.etag) res.setHeader('ETag', r.etag);
  writeBody(res, r, now, false);
}

function writeBody(res: ServerResponse, r: Rendered, now: number, head: boolean): void {
  if (!r.envelope) {
    res.setHeader('Content-Length', r.body.length);
    res.end(head ? undefined : r.body);
    return;
  }
  // the kept bytes and the moment's tail in one writev, rather than a copy of the page per send
  const tail = `,"timestamp":${now}}`;
  res.setHeader('Content-Length', r.body.length + tail.length);
  if (head) { res.end(); return; }
  res.cork();
  res.write(r.body);
  res.end(tail);
  res.uncork();
}
