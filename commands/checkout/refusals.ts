/**
 * How a checkout tells a payer why a payment did not go through: in words first (the page
 * shows them), the engine's own reason beside (the program's error by name, never a stack).
 * Session states that end a checkout carry codes of their own: 409 session_complete (paid
 * already), 409 session_paying (another payment of it is being confirmed), 410
 * session_expired.
 */
import type { Reply } from '../../infra/http/rendered.js';
import { errorEnvelope } from '../../src/kernel/http/envelope.js';
import { isPauseRefusal } from '../../src/kernel/domain/program-errors.js';

export type SessionEnd = 'session_complete' | 'session_paying' | 'session_expired';

const END: Record<SessionEnd, { status: number; error: string }> = {
  session_complete: { status: 409, error: 'this checkout session has been paid already' },
  session_paying: { status: 409, error: 'a payment of this checkout session is being confirmed; wait for it' },
  session_expired: { status: 410, error: 'this checkout session has expired' },
};

/** A refusal that is not an AppError: its answer is built here, with its own code. */
export class CheckoutRefusal extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly reason?: string) {
    super(message);
    this.name = 'CheckoutRefusal';
  }

  reply(now: number): Reply {
    return { status: this.status, body: { ...errorEnvelope(this.message, this.code, now), ...(this.reason !== undefined ? { reason: this.reason } : {}) } };
  }
}

export const sessionEnded = (end: SessionEnd): CheckoutRefusal => new CheckoutRefusal(END[end].status, end, END[end].error);

const WORDS: readonly [RegExp, string][] = [
  [/InsufficientBalance|InsufficientFunds|insufficient funds/i, 'the wallet does not hold enough of the token for this payment'],
  [/InsufficientDelegatedAmount|NoDelegateSet/, 'the wallet did not approve enough of the token for this payment'],
  [/PolicyExpired/, 'the payment policy has expired'],
  [/blockhash/i, 'the transaction expired before it was sent: sign it again'],
  [/Unauthorized|gateway .* is not active|GatewayInactive/i, 'the merchant\'s payment gateway does not take payments now'],
  [/proof/i, 'the signed message does not prove the payment is the wallet\'s: sign it again'],
  [/not acceptable|requirement|terms/i, 'the transaction does not carry this checkout\'s terms'],
];

/** The payer-facing sentence of an engine refusal; the reason itself travels beside it. */
export function refusalInWords(reason: string): string {
  if (isPauseRefusal(reason) || /ProgramPaused/.test(reason)) return 'payments are paused by the program right now: try again later';
  return WORDS.find(([re]) => re.test(reason))?.[1] ?? 'the payment was refused';
}

export const paymentRefused = (reason: string): CheckoutRefusal => new CheckoutRefusal(402, 'payment_refused', refusalInWords(reason), reason);
