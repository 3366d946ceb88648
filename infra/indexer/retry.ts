/** Waiting out an outage (Redis restarting): retry until it works or the indexer stops. */
import type { Logger } from 'pino';

export class StoppedError extends Error {
  constructor() {
    super('indexer stopped');
  }
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

export async function retryForever<T>(what: string, fn: () => Promise<T>, opts: { signal: AbortSignal; logger?: Logger }): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    if (opts.signal.aborted) throw new StoppedError();
    try {
      return await fn();
    } catch (err) {
      if (opts.signal.aborted) throw new StoppedError();
      const delay = Math.min(5_000, 100 * 2 ** Math.min(attempt, 6));
      opts.logger?.warn({ err: (err as Error).message, attempt: attempt + 1, delayMs: delay }, `${what} failed; retrying`);
      await sleep(delay, opts.signal);
    }
  }
}
