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
  post(url: string, body: string, headers: Record<string, string>, opts: PostOptions): Promise<PostResult>;
  close(): void;
}

/** Bytes of a response body read before the rest is dropped: receivers answer briefly. */
const MAX_BODY_BYTES = 64 * 1024;

export function createJsonPoster(opts: { allowPrivateTargets: boolean; maxSockets: number; userAgent: string }): JsonPoster {
  const agentOpts = { keepAlive: true, maxSockets: opts.maxSockets, scheduling: 'lifo' as const };
  const agents = { 'http:': new http.Agent(agentOpts), 'https:': new https.Agent(agentOpts) };

  function post(target: string, body: string, headers: Record<string, string>, po: PostOptions): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<PostResult>((resolve, reject) => {
      let url: URL;
      try {
        url = new URL(target);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefused(`target refused: ${url.protocol} is not http or https`);
        if (!opts.allowPrivateTargets) checkLiteralHost(url);
      } catch (err) {
        reject(new PostError('refused_target', (err as Error).message, elapsed()));
        return;
      }
      const timeout = AbortSignal.timeout(po.timeoutMs);
      const signal = po.signal ? AbortSignal.any([timeout, po.signal]) : timeout;
      const fail = (err: unknown) => {
        if (timeout.aborted) reject(new PostError('timeout', `timed out after ${po.timeoutMs} ms`, elapsed()));
        else if (po.signal?.aborted) reject(new PostError('aborted', 'aborted: worker stopping', elapsed()));
        else if (err instanceof TargetRefused) reject(new PostError('refused_target', err.message, elapsed()));
        else {
          const e = err as { code?: string; message?: string };
          reject(new PostError('network', e.code ? `${e.code}: ${e.message ?? ''}`.trim() : (e.message ?? 'network error'), elapsed()));
        }
      };
      const req = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        agent: agents[url.protocol],
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': opts.userAgent },
        signal,
        ...(opts.allowPrivateTargets ? {} : { lookup: guardedLookup }),
      }, (res) => {
        let bytes = 0;
        const retryAfter = res.headers['retry-after'];
        const answer = (): PostResult => ({ statusCode: res.statusCode ?? 0, latencyMs: elapsed(), ...(retryAfter !== undefined ? { retryAfter } : {}) });
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_BODY_BYTES) { res.destroy(); resolve(answer()); }
        });
        res.on('end', () => resolve(answer()));
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('response aborted')));
      });
      req.on('error', fail);
      req.end(body);
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
