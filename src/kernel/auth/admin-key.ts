/**
 * The administrator key (`x-admin-key`, security scheme AdminApiKey). Compared in
 * constant time over SHA-256 digests, so neither the content nor the length of the
 * configured key leaks through timing.
 *
 * When ADMIN_API_KEY is not configured, admin routes answer 403 with a message saying
 * so: no credential could authorize the call, and a 5xx would invite retries.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError, unauthorized } from '../http/errors.js';

export const ADMIN_KEY_HEADER = 'x-admin-key';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** True when `presented` equals `expected`, in time independent of both. */
export function adminKeyMatches(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  return timingSafeEqual(digest(expected), digest(presented));
}

export const adminDisabled = (): AppError =>
  new AppError('forbidden', 'admin API disabled: ADMIN_API_KEY is not configured on this server');

/** Throws the route's error when the request does not carry the configured admin key. */
export function checkAdminKey(expected: string | undefined, presented: string | undefined): void {
  if (expected === undefined || expected === '') throw adminDisabled();
  if (presented === undefined || presented === '') throw new AppError('unauthorized', `missing ${ADMIN_KEY_HEADER} header`);
  if (!adminKeyMatches(expected, presented)) throw unauthorized(`invalid ${ADMIN_KEY_HEADER}`);
}

/** Express middleware: 403 when no admin key is configured, 401 when missing or wrong. */
export function requireAdminKey(expected: string | undefined): RequestHandler {
  return (req, _res, next) => {
    try {
      checkAdminKey(expected, req.get(ADMIN_KEY_HEADER));
      next();
    } catch (err) {
      next(err);
    }
  };
}
