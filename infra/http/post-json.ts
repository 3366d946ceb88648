/**
 * Outbound JSON POSTs to user-supplied URLs, behind the SSRF guard, with one timeout over
 * the whole exchange (connect, headers and body). node:http rather than fetch: its
 * per-request `lookup` is what lets the guard see the address actually connected to.
 * Redirects are not followed (a redirect could point anywhere; it is a failed attempt).
 *
 * Contract: resolves with the status code of any complete answer (2xx or not); rejects
 * with a PostError whose kind says why there was no answer.
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { checkLiteralHost, guardedLookup, TargetRefused } from './ssrf-guard.js';

export type PostErrorKind = 'timeout' | 'refused_target' | 'network' | 'aborted';

export class PostError extends Error {
  constructor(readonly kind: PostErrorKind, message: string, readonly latencyMs: number) {
    super(message);
    this.name = 'PostError';
  }
}

/** retryAfter: the answer's Retry-After header, as sent (receivers ask for a pause with it) */
export interface PostResult { statusCode: number; latencyMs: number; retryAfter?: string }

export interface PostOptions {
  timeoutMs: number;
  /** aborts the request (a worker stopping) */
  signal?: AbortSignal;
}

export interface JsonPoster {
  /** `body`: JSON text, or its UTF-8 bytes */
  post(url: string, body: string | Buffer, headers: Record<string, string>, opts: PostOptions): Promise<PostResult>;
  close(): void;
}

/** Bytes of a response body read before the rest is dropped: receivers answer briefly. */
const MAX_BODY_BYTES = 64 * 1024;

/** Targets whose parsed form is kept (a worker sends to a few endpoints many times). */
const TARGETS_KEPT = 1000;

/** A target URL parsed and checked once: what each request to it needs. */
interface Target { mod: typeof http | typeof https; agent: http.Agent; hostname: string; port: string; path: string }

export function createJsonPoster(opts: { allowPrivateTargets: boolean; maxSockets: number; userAgent: string }): JsonPoster {
  const agentOpts = { keepAlive: true, maxSockets: opts.maxSockets, scheduling: 'lifo' as const };
  // one keep-alive pool per origin (an agent keeps its sockets by host and port)
  const agents = { 'http:': new http.Agent(agentOpts), 'https:': new https.Agent(agentOpts) };
  const targets = new Map<string, Target>();
  // one listener per caller's signal (a worker's stop), whatever the requests in flight on it
  const aborters = new WeakMap<AbortSignal, Set<() => void>>();
  const onAbortOf = (signal: AbortSignal, fn: () => void): (() => void) => {
    let fns = aborters.get(signal);
    if (!fns) {
      const set = new Set<() => void>();
      fns = set;
      aborters.set(signal, set);
      signal.addEventListener('abort', () => { for (const f of [...set]) f(); }, { once: true });
    }
    fns.add(fn);
    return () => { fns.delete(fn); };
  };

  function targetOf(raw: string): Target {
    const known = targets.get(raw);
    if (known) return known;
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefused(`target refused: ${url.protocol} is not http or https`);
    if (!opts.allowPrivateTargets) checkLiteralHost(url);
    const t: Target = {
      mod: url.protocol === 'https:' ? https : http,
      agent: agents[url.protocol],
      // [::1] is the URL's form of an IPv6 host; a request takes it bare
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
    };
    if (targets.size >= TARGETS_KEPT) targets.clear();
    targets.set(raw, t);
    return t;
  }

  function post(raw: string, body: string | Buffer, headers: Record<string, string>, po: PostOptions): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<PostResult>((resolve, reject) => {
      let target: Target;
      try {
        target = targetOf(raw);
      } catch (err) {
        reject(new PostError('refused_target', (err as Error).message, elapsed()));
        return;
      }
      if (po.signal?.aborted) {
        reject(new PostError('aborted', 'aborted: worker stopping', elapsed()));
        return;
      }
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      // a timer and a shared listener, not AbortSignal.timeout/any: those cost more than the request's own work
      let why: 'timeout' | 'aborted' | undefined;
      let done = false;
      const timer = setTimeout(() => { why = 'timeout'; req.destroy(new Error('timeout')); }, po.timeoutMs);
      const stopWatching = po.signal ? onAbortOf(po.signal, () => { why ??= 'aborted'; req.destroy(new Error('aborted')); }) : undefined;
      const finish = () => {
        done = true;
        clearTimeout(timer);
        stopWatching?.();
      };
      const fail = (err: unknown) => {
        if (done) return;
        finish();
        if (why === 'timeout') reject(new PostError('timeout', `timed out after ${po.timeoutMs} ms`, elapsed()));
        else if (why === 'aborted') reject(new PostError('aborted', 'aborted: worker stopping', elapsed()));
        else if (err instanceof TargetRefused) reject(new PostError('refused_target', err.message, elapsed()));
        else {
          const e = err as { code?: string; message?: string };
          reject(new PostError('network', e.code ? `${e.code}: ${e.message ?? ''}`.trim() : (e.message ?? 'network error'), elapsed()));
        }
      };
      const req = target.mod.request({
        method: 'POST',
        hostname: target.hostname,
        port: target.port,
        path: target.path,
        agent: target.agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(bytes.length), 'user-agent': opts.userAgent },
        ...(opts.allowPrivateTargets ? {} : { lookup: guardedLookup }),
      }, (res) => {
        let read = 0;
        const retryAfter = res.headers['retry-after'];
        const answer = () => {
          if (done) return;
          finish();
          resolve({ statusCode: res.statusCode ?? 0, latencyMs: elapsed(), ...(retryAfter !== undefined ? { retryAfter } : {}) });
        };
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_BODY_BYTES) { answer(); res.destroy(); }
        });
        res.on('end', answer);
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('response aborted')));
      });
      req.on('error', fail);
      req.end(bytes);
    });
  }

  return {
    post,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
