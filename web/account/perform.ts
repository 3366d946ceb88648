/**
 * One change on chain, as every action of the page makes it: the service builds the
 * unsigned transaction, the wallet signs it, the service sends it and waits for the chain.
 * Each step is said in words; a failure says whose it was (the wallet's prompt, the
 * service's refusal with its reason) and that nothing changed when that is so.
 */
import { base58, firstSignature, fromBase64, toBase64 } from '../shared/bytes.js';
import { short } from '../shared/format.js';
import { ApiError, messageOf } from '../shared/http.js';
import { walletMessage, type Connected } from '../shared/wallet.js';
import { currentSession, mePost, status } from './state.js';
import { PageError } from './errors.js';
import type { RelayAnswer, UnsignedAnswer } from './types.js';
import { walletFor } from './wallets.js';


export interface Change {
  /** under /v1/me/: policies/<address>/pause, approvals/revoke */
  path: string;
  body?: unknown;
  /** what is being done, for the words: "pause the subscription to Acme" */
  what: string;
  /** progress beside the row that asked */
  progress(text: string): void;
}

export type Outcome = { confirmed: true; signature: string } | { confirmed: false };

function say(change: Change, text: string, tone: 'info' | 'error' = 'info'): void {
  status.say(text, tone);
  change.progress(tone === 'error' ? '' : text);
}

/** The words for a failure at `stage`, and whether anything may have reached the chain. */
export function failureWords(err: unknown, stage: 'wallet' | 'service' | 'send'): string {
  if (err instanceof PageError) return err.message;
  if (err instanceof ApiError) {
    const nothing = stage === 'send' && err.status >= 500 ? '' : ' Nothing changed.';
    return `${err.message}${/[.!?]$/.test(err.message) ? '' : '.'}${nothing}`;
  }
  return stage === 'wallet' ? walletMessage(err) : messageOf(err);
}

async function signWith(change: Change): Promise<{ wallet: Connected; signed: Uint8Array } | undefined> {
  const session = currentSession();
  if (!session) { say(change, 'You are signed out: sign in with your wallet again.', 'error'); return undefined; }
  let wallet: Connected;
  try {
    wallet = await walletFor(session.wallet);
  } catch (err) {
    say(change, failureWords(err, 'wallet'), 'error');
    return undefined;
  }
  let built: UnsignedAnswer;
  try {
    say(change, 'Preparing the transaction…');
    built = await mePost<UnsignedAnswer>(change.path, change.body);
  } catch (err) {
    say(change, `Could not ${change.what}: ${failureWords(err, 'service')}`, 'error');
    return undefined;
  }
  try {
    say(change, `Approve in ${wallet.name}: ${built.summary}.`);
    return { wallet, signed: await wallet.signTransaction(fromBase64(built.transaction)) };
  } catch (err) {
    say(change, failureWords(err, 'wallet'), 'error');
    return undefined;
  }
}

/** Builds, signs and sends the change; confirmed only when the service says the chain confirmed it. */
export async function perform(change: Change): Promise<Outcome> {
  const signed = await signWith(change);
  if (!signed) return { confirmed: false };
  let sent: RelayAnswer;
  try {
    say(change, 'Confirming…');
    sent = await mePost<RelayAnswer>('transactions', { transaction: toBase64(signed.signed) });
  } catch (err) {
    say(change, `Could not ${change.what}: ${failureWords(err, 'send')}`, 'error');
    return { confirmed: false };
  }
  if (sent.status !== 'confirmed') {
    const id = base58(firstSignature(signed.signed));
    say(change, `Sent (transaction ${short(id)}), but the chain has not confirmed it yet. Refresh in a moment to see whether it landed.`, 'error');
    return { confirmed: false };
  }
  return { confirmed: true, signature: sent.signature };
}
