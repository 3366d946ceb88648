/** The checkout session as the page reads it (GET /v1/checkout/sessions/{id}/public), and its actions. */
import { getJson, postJson } from '../shared/http.js';

export type SessionStatus = 'open' | 'complete' | 'expired';

export interface PublicSession {
  id?: string;
  status: SessionStatus;
  label?: string | null;
  recipient: string;
  gateway: string;
  amount: string;
  decimals: number;
  amountUi?: string;
  tokenMint: string;
  scheme: string;
  frequency?: string | null;
  period?: string | number | null;
  fees?: unknown;
  firstCharge?: unknown;
  expiresAt?: string | number | null;
  cancelUrl: string;
  successUrl?: string | null;
}

export interface TransactionAnswer {
  transaction: string;
  proof: Record<string, unknown> & { signedAt: number };
}

export interface PayAnswer { status: 'complete'; policy?: string; transaction?: string; redirectUrl: string }

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
