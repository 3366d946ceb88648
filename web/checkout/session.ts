/** The checkout session as the page reads it (GET /v1/checkout/sessions/{id}/public), and its actions. */
import { getJson, postJson } from '../shared/http.js';
import type { CheckoutTransaction as TransactionAnswer, PayAnswer, PublicView as PublicSession } from '../../src/kernel/wire/answers/checkout.js';

export type {
  CheckoutTransaction as TransactionAnswer, Fees, Money, PayAnswer, ProofParts, PublicView as PublicSession, Schedule, SessionStatus,
} from '../../src/kernel/wire/answers/checkout.js';

const base = (id: string) => `/v1/checkout/sessions/${encodeURIComponent(id)}`;

/** The answer's data when it comes in the success envelope, else the answer itself. */
function unwrap<T>(body: T | { data: T }): T {
  const wrapped = body as { data?: T } | null;
  return wrapped && typeof wrapped === 'object' && wrapped.data !== undefined ? wrapped.data : (body as T);
}

export async function readSession(id: string): Promise<PublicSession> {
  return unwrap(await getJson<PublicSession | { data: PublicSession }>(`${base(id)}/public`));
}

export async function unsignedTransaction(id: string, payer: string): Promise<TransactionAnswer> {
  return unwrap(await postJson<TransactionAnswer | { data: TransactionAnswer }>(`${base(id)}/transaction`, { payer }));
}

export async function paySession(id: string, transaction: string, proof: { signedAt: number; signature: string }): Promise<PayAnswer> {
  return unwrap(await postJson<PayAnswer | { data: PayAnswer }>(`${base(id)}/pay`, { transaction, proof }));
}

/** The session id from the page's path: /checkout/<id>. */
export function sessionIdFromPath(pathname: string): string | undefined {
  const m = /^\/checkout\/([^/]+)\/?$/.exec(pathname);
  return m?.[1] ? decodeURIComponent(m[1]) : undefined;
}
