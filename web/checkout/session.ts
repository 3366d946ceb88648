/** The checkout session as the page reads it (GET /v1/checkout/sessions/{id}/public), and its actions. */
import { getJson, postJson } from '../shared/http.js';

export type SessionStatus = 'open' | 'complete' | 'expired';

/** An amount in the mint's base units, and as the service writes it with the mint's decimals. */
export interface Money { baseUnits: string; ui: string }

export interface Schedule {
  kind: 'subscription' | 'pay-as-you-go' | 'up-to' | 'prepaid';
  paymentFrequency?: string;
  periodSeconds?: number;
  autoRenew?: boolean;
  maxRenewals?: number | null;
  maxAmountPerPeriod?: Money;
  maxChunkAmount?: Money;
  maxTimeoutSeconds?: number;
  pricePerRequest?: Money;
}

export interface Fees {
  gatewayFeeBps: number;
  protocolShareBps: number;
  netMode: boolean;
  gatewayFee: Money;
  protocolFee: Money;
  recipientReceives: Money;
  payerPays: Money;
}

export interface PublicSession {
  id: string;
  status: SessionStatus;
  label: string | null;
  payee: { recipient: string; gateway: string };
  scheme: string;
  network: string;
  tokenMint: string;
  currency: string;
  decimals: number;
  amount: Money;
  schedule: Schedule;
  fees: Fees | null;
  firstCharge: { amount: Money; at: string } | null;
  programPaused: boolean;
  expiresAt: string;
  cancelUrl: string;
  successUrl?: string;
}

/** The proof-of-possession text's parts: the wallet signs `template` with {signature} filled in. */
export interface ProofParts { prefix: string; requirementId: string; resource: string; signedAt: number; windowSeconds: number; template: string }

export interface TransactionAnswer { transaction: string; payer: string; policy: string; proof: ProofParts; lastValidBlockHeight: number }

export interface PayAnswer { status: 'complete'; policy: string; transaction: string | null; payer: string; redirectUrl: string }

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
