/** The dashboard's session (gateway and JWT), its view settings, and reads of the merchant routes. */
import { getJson, ApiError } from '../shared/http.js';
import type { SuccessEnvelope } from '../../src/kernel/wire/answers/envelope.js';
import { statusLine } from '../shared/status.js';

export interface Session {
  gateway: string | null;
  token: string | null;
  bucket: string;
  mint: string | null;
  offset: number;
  limit: number;
  status: string;
  refreshTimer: ReturnType<typeof setTimeout> | undefined;
}

export const S: Session = { gateway: null, token: null, bucket: 'day', mint: null, offset: 0, limit: 25, status: '', refreshTimer: undefined };

export const status = statusLine();

export const STORAGE_KEY = 'tributary.dashboard';

/** Called when the service says the JWT no longer works. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

export function base(): string {
  return `/v1/gateway/${encodeURIComponent(S.gateway ?? '')}/merchant/`;
}

/** A merchant route's data (the success envelope's `data`), with the session's JWT. */
export async function api<T>(path: string): Promise<T> {
  try {
    return (await getJson<SuccessEnvelope<T>>(base() + path, { token: S.token })).data;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) onUnauthorized();
    throw err;
  }
}
