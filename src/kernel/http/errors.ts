/**
 * Typed errors, mapped to HTTP in one place (the error handler). Handlers and services
 * throw these; a 5xx never exposes its message.
 */
export type ErrorKind =
  | 'invalid_input'
  | 'unauthorized'
  /** a credential is asked for without proof of possession of the wallet it names */
  | 'proof_required'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream_unavailable'
  | 'internal';

export const STATUS_OF: Readonly<Record<ErrorKind, number>> = {
  invalid_input: 400,
  unauthorized: 401,
  proof_required: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  upstream_unavailable: 503,
  internal: 500,
};

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
  }
  get status(): number {
    return STATUS_OF[this.kind];
  }
}

export const invalid = (message: string, details?: unknown) => new AppError('invalid_input', message, {}, details);
export const unauthorized = (message: string) => new AppError('unauthorized', message, { 'WWW-Authenticate': 'Bearer' });
export const proofRequired = (message: string) => new AppError('proof_required', message, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (message: string) => new AppError('forbidden', message);
export const notFound = (message: string) => new AppError('not_found', message);
export const conflict = (message: string) => new AppError('conflict', message);
export const upstreamUnavailable = (message: string) => new AppError('upstream_unavailable', message);
