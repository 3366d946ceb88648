/**
 * The one outbound read of discovery: an origin's token file, fetched behind the SSRF
 * guard webhooks use (infra/http/ssrf-guard.ts: IP literals checked before connecting,
 * names checked by the socket's own lookup), with the same switch for private targets
 * (WEBHOOK_ALLOW_PRIVATE_TARGETS). Redirects are not followed (the file must be served by
 * the origin itself), one timeout bounds the whole exchange and the body is read up to a
 * small cap. Outcomes are classified, never raw socket errors: the route is reachable by
 * any gateway and must not tell an open port from a closed one.
 */
// first: Node's own fetch keeps its own dispatcher (builtin-dispatcher.ts says why)
import '../../../infra/http/builtin-dispatcher.js';
import { Agent } from 'undici';
import { checkLiteralHost, guardedLookup, TargetRefused } from '../../../infra/http/ssrf-guard.js';

export type FetchOutcome =
  | { kind: 'ok'; text: string }
  /** the SSRF guard refused the address */
  | { kind: 'refused_target'; message: string }
  /** no answer: refused, reset, timed out, unresolvable (one outcome for all of them) */
  | { kind: 'unreachable' }
  | { kind: 'redirect'; status: number }
  | { kind: 'status'; status: number }
  | { kind: 'too_large'; maxBytes: number };

export interface OriginFetcher {
  getText(url: string): Promise<FetchOutcome>;
  close(): Promise<void>;
}

/** Ends a body not read to its end (its 'error' on destroy is expected, not a failure). */
function drop(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => undefined);
  body.destroy();
}

export function createOriginFetcher(opts: { allowPrivateTargets: boolean; timeoutMs: number; maxBytes: number; userAgent: string }): OriginFetcher {
  const agent = new Agent({ connections: 4, ...(opts.allowPrivateTargets ? {} : { connect: { lookup: guardedLookup } }) });

  async function getText(raw: string): Promise<FetchOutcome> {
    const url = new URL(raw);
    if (!opts.allowPrivateTargets) {
      try {
        checkLiteralHost(url);
      } catch (err) {
        return { kind: 'refused_target', message: (err as Error).message };
      }
    }
    const signal = AbortSignal.timeout(opts.timeoutMs);
    try {
      const res = await agent.request({
        origin: url.origin, path: `${url.pathname}${url.search}`, method: 'GET', signal,
        headers: { accept: 'text/plain', 'user-agent': opts.userAgent },
      });
      if (res.statusCode >= 300 && res.statusCode < 400) { drop(res.body); return { kind: 'redirect', status: res.statusCode }; }
      if (res.statusCode !== 200) { drop(res.body); return { kind: 'status', status: res.statusCode }; }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (declared > opts.maxBytes) { drop(res.body); return { kind: 'too_large', maxBytes: opts.maxBytes }; }
      const chunks: Buffer[] = [];
      let read = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        read += chunk.length;
        if (read > opts.maxBytes) { drop(res.body); return { kind: 'too_large', maxBytes: opts.maxBytes }; }
        chunks.push(chunk);
      }
      return { kind: 'ok', text: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      const e = err as { code?: string; cause?: unknown };
      if (err instanceof TargetRefused || e.code === 'ESSRF' || e.cause instanceof TargetRefused) {
        return { kind: 'refused_target', message: ((e.cause instanceof TargetRefused ? e.cause : err) as Error).message };
      }
      return { kind: 'unreachable' };
    }
  }

  return { getText, close: () => agent.close() };
}
