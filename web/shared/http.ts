import type { ErrorEnvelope } from '../../src/kernel/wire/answers/envelope.js';

/**
 * JSON over fetch, same origin. A failure carries the service's error envelope
 * `{error, code?}` as words (never a stack), with the HTTP status beside it.
 */
export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly code: string | undefined) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The error envelope's fields as they may come (a proxy's answer is not ours): each checked before use. */
type Envelope = { [K in keyof ErrorEnvelope]?: unknown } & { message?: unknown };

function describe(status: number, body: Envelope): ApiError {
  const said = typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : undefined;
  const code = typeof body.code === 'string' ? body.code : undefined;
  return new ApiError(said ?? (status >= 500 ? 'the service could not answer; try again in a moment' : `the request was refused (HTTP ${status})`), status, code);
}

export interface RequestOptions { token?: string | null; signal?: AbortSignal }

async function call<T>(method: string, path: string, body: unknown, options: RequestOptions): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), signal: options.signal ?? null });
  } catch {
    throw new ApiError('the service cannot be reached; check the connection and try again', 0, undefined);
  }
  const parsed = (await res.json().catch(() => ({}))) as unknown;
  const envelope = (parsed && typeof parsed === 'object' ? parsed : {}) as Envelope;
  if (!res.ok) throw describe(res.status, envelope);
  return parsed as T;
}

export function getJson<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return call<T>('GET', path, undefined, options);
}

export function postJson<T>(path: string, body: unknown, options: RequestOptions = {}): Promise<T> {
  return call<T>('POST', path, body, options);
}

/** The message to show for anything thrown: an ApiError's words, a wallet's own message, or a plain fallback. */
export function messageOf(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  if (typeof err === 'string' && err) return err;
  return 'something went wrong';
}
