/**
 * The signed-in payer: its wallet address and payer JWT (kept in sessionStorage, so a
 * reload in the same tab stays signed in and closing the tab forgets it), the wallet
 * connection the page signs with, and calls to /v1/me with the token.
 */
import { ApiError, getJson, postJson } from '../shared/http.js';
import { statusLine } from '../shared/status.js';
import type { Connected } from '../shared/wallet.js';

export const STORAGE_KEY = 'tributary.account';

export interface Session { wallet: string; token: string; expiresAt: number }

export const status = statusLine();

let session: Session | null = null;
let wallet: Connected | undefined;

export function currentSession(): Session | null {
  return session;
}

export function saveSession(next: Session): void {
  session = next;
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next));
}

export function forgetSession(): void {
  session = null;
  wallet = undefined;
  sessionStorage.removeItem(STORAGE_KEY);
}

/** The session this tab kept, unless it is malformed or its token has expired. */
export function restoreSession(now = Date.now()): Session | null {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<Session> | null;
    if (saved && typeof saved.wallet === 'string' && typeof saved.token === 'string' && typeof saved.expiresAt === 'number' && saved.expiresAt > now) {
      session = { wallet: saved.wallet, token: saved.token, expiresAt: saved.expiresAt };
      return session;
    }
  } catch {
    // a value this page did not write: start signed out
  }
  sessionStorage.removeItem(STORAGE_KEY);
  return null;
}

export function connectedWallet(): Connected | undefined {
  return wallet;
}

export function useWallet(next: Connected): void {
  wallet = next;
}

/** Called when the service no longer accepts the token. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

async function withToken<T>(call: (token: string) => Promise<T>): Promise<T> {
  if (!session) throw new ApiError('You are signed out: sign in with your wallet again.', 401, undefined);
  try {
    return await call(session.token);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      onUnauthorized();
      throw new ApiError(`Your sign-in is no longer valid (${err.message}). Sign in with your wallet again.`, 401, err.code);
    }
    throw err;
  }
}

export function meGet<T>(path: string): Promise<T> {
  return withToken((token) => getJson<T>(`/v1/me/${path}`, { token }));
}

export function mePost<T>(path: string, body?: unknown): Promise<T> {
  return withToken((token) => postJson<T>(`/v1/me/${path}`, body, { token }));
}
