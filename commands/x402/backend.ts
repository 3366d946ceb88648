/**
 * Where the middleware's payments are decided: the payment engine in this process (a
 * local chain connection, engine.ts), or a remote Tributary facilitator over HTTP
 * (/v1/x402/settle and /v1/x402/usage with a gateway API key): the same checks run in
 * either case, in the engine of the process that holds the chain connection.
 */
import type { Logger } from '../../infra/log/logger.js';
import { systemClock, type Clock } from '../../src/kernel/domain/clock.js';
import { AppError, conflict, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { PaymentEngine, X402Grant } from './engine.js';
import type { SettledResult } from './idempotency.js';
import type { PaymentPayload } from './payload.js';
import type { PaymentRequirement } from './requirements.js';
import { acceptedRequirement } from './requirement-forms.js';
import { schemeOf } from './schemes/index.js';

export type Paid = { ok: true; result: SettledResult } | { ok: false; reason: string };

export interface PaymentBackend {
  clock: Clock;
  pay(p: PaymentPayload, r: PaymentRequirement, resource: string): Promise<Paid>;
  /** `accepted` are the resource's requirements; the JWT's claims pick one */
  authorize(token: string, accepted: readonly PaymentRequirement[], resource: string, chunk: bigint | undefined): Promise<X402Grant | string>;
  /** how the request of a grant ended (engine.ts answered); the remote facilitator knows it from its own answer */
  answered(grant: X402Grant, served: boolean): Promise<void>;
}

/**
 * The engine in this process: a payment is one engine call (verify, settle, the
 * payment-identifier extension in the same Redis entries as the facilitator's, scoped by
 * the gateway paid). `_opts` is the engine's own setting (X402Deps.idempotencyTtlSeconds).
 */
export function localBackend(engine: PaymentEngine): PaymentBackend {
  return {
    clock: engine.clock,
    pay: (p, r, resource) => engine.pay(p, r, resource, r.gateway),
    authorize(token, accepted, _resource, chunk) {
      const byId = new Map(accepted.map((r) => [r.id, r]));
      return engine.authorize(token, (c) => byId.get(c.requirementId), chunk);
    },
    answered: (grant, served) => engine.answered(grant, served),
  };
}

/** The middleware's settings when a remote facilitator decides (no chain connection here). */
export interface RemoteFacilitatorDeps {
  /** the Tributary service, e.g. https://api.tributary.so */
  facilitatorUrl: string;
  /** a gateway API key (POST /v1/gateway/{gateway}/api-keys) */
  apiKey: string;
  /** the program the requirements are under (their ids hash it) */
  programId: string;
  clock?: Clock;
  logger?: Logger;
  resourceBase?: string;
  /** per call; default 60000 (a settlement waits for confirmation) */
  timeoutMs?: number;
}

export function remoteBackend(d: RemoteFacilitatorDeps): PaymentBackend {
  const base = d.facilitatorUrl.replace(/\/$/, '');
  async function post<T>(path: string, body: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': d.apiKey }, body: JSON.stringify(body),
        signal: AbortSignal.timeout(d.timeoutMs ?? 60_000),
      });
    } catch (err) {
      throw upstreamUnavailable(`the x402 facilitator did not answer: ${(err as Error).message}`);
    }
    const answer = (await res.json().catch(() => ({}))) as T & { error?: string };
    if (res.status === 409) throw conflict(answer.error ?? 'the facilitator answered 409');
    if (res.status === 400) throw new AppError('invalid_input', `the facilitator refused the request: ${answer.error ?? ''}`);
    if (res.status !== 200) throw upstreamUnavailable(`the x402 facilitator answered ${res.status}: ${answer.error ?? ''}`);
    return answer;
  }
  const wire = (r: PaymentRequirement, resource: string) => acceptedRequirementWire(r, resource);
  return {
    clock: d.clock ?? systemClock,
    async pay(p, r, resource) {
      const a = await post<{ success: boolean; errorReason?: string; jwt?: string; paymentResponse?: string; policy?: string; transaction?: string }>(
        '/v1/x402/settle', { x402Version: 2, paymentPayload: p, paymentRequirements: wire(r, resource) },
      );
      if (!a.success || !a.jwt || !a.paymentResponse) return { ok: false, reason: a.errorReason ?? 'the facilitator refused the payment' };
      const message = a.transaction
        ? `payment policy ${a.policy ?? ''} created (transaction ${a.transaction}). Present the JWT as a bearer token.`
        : `the payer already holds the active payment policy ${a.policy ?? ''} with these terms; no new policy was created. Present the JWT as a bearer token.`;
      return { ok: true, result: { paymentResponse: a.paymentResponse, body: { jwt: a.jwt, message } } };
    },
    async authorize(token, accepted, resource, chunk) {
      const a = await post<{ admitted: boolean; reason?: string } & Partial<X402Grant>>('/v1/x402/usage', {
        jwt: token, paymentRequirements: accepted.map((r) => wire(r, resource)), ...(chunk !== undefined ? { amount: chunk.toString() } : {}),
      });
      if (!a.admitted) return a.reason ?? 'the facilitator did not admit the request';
      const { admitted: _a, reason: _r, ...grant } = a;
      return grant as X402Grant;
    },
    // the facilitator's reservation is settled by its /v1/x402/usage answer reaching this process
    answered: async () => undefined,
  };
}

/** An accepts entry with exact amounts (decimal strings), as the facilitator takes requirements. */
function acceptedRequirementWire(r: PaymentRequirement, resource: string): Record<string, unknown> {
  return { ...acceptedRequirement(r, r.resource ?? resource), amount: r.amount.toString(), ...schemeOf(r).wireTerms?.(r) };
}
