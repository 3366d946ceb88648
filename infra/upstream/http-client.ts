/**
 * A JSON-over-HTTP client for one upstream (the token catalog, one pool venue): every call
 * bounded by a timeout that aborts the request, and all calls of one upstream behind one
 * circuit breaker (opossum), so a dead or slow upstream costs a fast failure instead of
 * a timeout per request while it recovers.
 *
 * Contract: `getJson` resolves with the parsed body of a 2xx answer, or rejects with an
 * UpstreamError. Secret headers (an API key) are sent with every call and never appear in
 * an error message or a log line: errors name the upstream and the path, nothing else.
 */
import CircuitBreaker from 'opossum';
import type { Logger } from '../log/logger.js';
import { UpstreamError } from './errors.js';

export interface BreakerSettings {
  /** failure percentage in the rolling window above which the breaker opens */
  errorThresholdPercentage: number;
  /** how long an open breaker waits before letting one trial call through */
  resetTimeoutMs: number;
  /** calls in the window before the percentage counts (a single failure does not open it) */
  volumeThreshold: number;
  /** length of the rolling window */
  rollingWindowMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = {
  errorThresholdPercentage: 50,
  resetTimeoutMs: 30_000,
  volumeThreshold: 5,
  rollingWindowMs: 10_000,
};

export interface UpstreamClientOptions {
  name: string;
  baseUrl: string;
  timeoutMs: number;
  /** sent with every request; treated as secret */
  headers?: Readonly<Record<string, string>>;
  breaker?: Partial<BreakerSettings>;
  logger?: Logger;
  fetch?: typeof fetch;
}

export type QueryParams = Readonly<Record<string, string | number | boolean | undefined>>;

export interface UpstreamClient {
  readonly name: string;
  getJson(path: string, query?: QueryParams): Promise<unknown>;
  /** whether calls are currently refused without being attempted */
  isOpen(): boolean;
  shutdown(): void;
}

export function buildUrl(baseUrl: string, path: string, query: QueryParams = {}): URL {
  // A base with a path (https://api.orca.so/v2/solana) keeps it: resolve against "base/".
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const url = new URL(path.replace(/^\//, ''), base);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

export function createUpstreamClient(opts: UpstreamClientOptions): UpstreamClient {
  const doFetch = opts.fetch ?? fetch;
  const settings = { ...DEFAULT_BREAKER, ...opts.breaker };

  async function call(url: URL): Promise<unknown> {
    const where = url.pathname;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(url, {
        headers: { accept: 'application/json', ...opts.headers },
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const e = err as Error;
      if (e.name === 'TimeoutError' || e.name === 'AbortError') {
        throw new UpstreamError(opts.name, 'timeout', `${where} timed out after ${opts.timeoutMs} ms`);
      }
      throw new UpstreamError(opts.name, 'network', `${where} unreachable`);
    }
    if (!res.ok) throw new UpstreamError(opts.name, 'http', `${where} answered HTTP ${res.status}`, res.status);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UpstreamError(opts.name, 'invalid', `${where} answered a body that is not JSON`);
    }
  }

  const breaker = new CircuitBreaker(call, {
    // our own timeout aborts the request; opossum's would only stop waiting for it
    timeout: false,
    errorThresholdPercentage: settings.errorThresholdPercentage,
    resetTimeout: settings.resetTimeoutMs,
    volumeThreshold: settings.volumeThreshold,
    rollingCountTimeout: settings.rollingWindowMs,
    // A 4xx other than 429 is about our request, not the upstream's health.
    errorFilter: (err: unknown) => err instanceof UpstreamError && err.failure === 'http'
      && err.status !== undefined && err.status >= 400 && err.status < 500 && err.status !== 429,
  });
  breaker.on('open', () => opts.logger?.warn({ upstream: opts.name }, 'upstream circuit opened'));
  breaker.on('halfOpen', () => opts.logger?.info({ upstream: opts.name }, 'upstream circuit half-open: trying one call'));
  breaker.on('close', () => opts.logger?.info({ upstream: opts.name }, 'upstream circuit closed'));

  return {
    name: opts.name,
    async getJson(path, query) {
      const url = buildUrl(opts.baseUrl, path, query);
      try {
        return await breaker.fire(url);
      } catch (err) {
        if (err instanceof UpstreamError) throw err;
        if ((err as { code?: string }).code === 'EOPENBREAKER') {
          throw new UpstreamError(opts.name, 'open', 'circuit open: upstream failing, call not attempted');
        }
        throw new UpstreamError(opts.name, 'network', (err as Error).message);
      }
    },
    isOpen: () => breaker.opened,
    shutdown: () => breaker.shutdown(),
  };
}
