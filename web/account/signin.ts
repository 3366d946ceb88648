/**
 * Signing in: the wallet signs the service's one-time payer sign-in message (its UTF-8
 * bytes, exactly as the service sent them), the service answers a payer token for
 * /v1/me, kept in this tab's sessionStorage until it expires or the payer signs out.
 */
import { byId } from '../shared/dom.js';
import { ApiError, messageOf, postJson } from '../shared/http.js';
import { walletMessage, type Connected } from '../shared/wallet.js';
import { PageError } from './errors.js';
import { forgetSession, saveSession, status, type Session } from './state.js';
import type { Challenge, PayerToken } from './types.js';
import { walletFor } from './wallets.js';

const PURPOSE = 'tributary-payer-sign-in';

/** Only a payer sign-in for this very wallet is signed: purpose|service|wallet|random. */
export function checkNonce(nonce: string, wallet: string): void {
  const parts = nonce.split('|');
  if (parts.length !== 4 || parts[0] !== PURPOSE || parts[2] !== wallet) {
    throw new PageError('The service sent a message that is not a sign-in for this wallet; it was not signed.');
  }
}

async function signedSession(wallet: Connected): Promise<Session> {
  status.say('Asking the service for a sign-in message…');
  const challenge = await postJson<Challenge>('/v1/me/auth/challenge', { wallet: wallet.address });
  checkNonce(challenge.nonce, wallet.address);
  status.say(`Approve the sign-in message in ${wallet.name}…`);
  let signature: Uint8Array;
  try {
    signature = await wallet.signMessage(new TextEncoder().encode(challenge.nonce));
  } catch (err) {
    throw new PageError(walletMessage(err));
  }
  status.say('Checking the signature…');
  const answer = await postJson<PayerToken>('/v1/me/auth/verify', { wallet: wallet.address, nonce: challenge.nonce, signature: Array.from(signature) });
  // a few seconds early: a request sent at the last moment would be refused
  return { wallet: wallet.address, token: answer.token, expiresAt: Date.now() + Math.max(0, answer.expiresIn - 5) * 1000 };
}

/** Connects a wallet and signs in; the session, or undefined when it did not work (said in the status line). */
export async function signIn(): Promise<Session | undefined> {
  let wallet: Connected;
  try {
    wallet = await walletFor();
  } catch (err) {
    status.say(err instanceof PageError ? err.message : walletMessage(err), 'error');
    return undefined;
  }
  try {
    const session = await signedSession(wallet);
    saveSession(session);
    return session;
  } catch (err) {
    const words = err instanceof PageError ? err.message : err instanceof ApiError ? err.message : messageOf(err);
    status.say(`Sign-in failed: ${words}`, 'error');
    return undefined;
  }
}

let expiry: ReturnType<typeof setTimeout> | undefined;

/** Shows the signed-in page (or the sign-in card), and signs out by itself when the token expires. */
export function showSignedIn(session: Session | null, onExpired: () => void): void {
  byId('sign-in').hidden = session !== null;
  byId('account').hidden = session === null;
  byId('who').hidden = session === null;
  byId('who-wallet').textContent = session?.wallet ?? '';
  if (expiry) clearTimeout(expiry);
  expiry = session ? setTimeout(onExpired, Math.max(0, session.expiresAt - Date.now())) : undefined;
}

export function signOut(): void {
  forgetSession();
  showSignedIn(null, () => undefined);
}
