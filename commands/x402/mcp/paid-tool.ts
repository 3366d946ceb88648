/**
 * `paidTool(server, name, config, requirements, engine, handler)`: an MCP tool sold under
 * the x402 MCP transport (x402's specs/transports-v2/mcp.md, the tool-result binding),
 * paid with any of Tributary's schemes through the same payment engine the HTTP
 * middleware and the facilitator call (engine.ts):
 *
 *   1. A call without `_meta["x402/payment"]` is a tool result with `isError: true`, the
 *      x402 v2 PaymentRequired in `structuredContent` ({x402Version: 2, error, resource:
 *      {url: mcp://tool/<name>}, accepts: [the standard form, Tributary's terms and
 *      extra.id in `extra`]}) and the same object as JSON in `content[0].text`. The tool
 *      does not run.
 *   2. `_meta["x402/payment"]`: a standard v2 PaymentPayload whose `accepted` is the entry
 *      paid and whose `payload` is the Tributary payload (a signed transaction and the
 *      payer's proof naming the resource URL, or {payer, proof} from a payer already holding
 *      a matching policy). engine.pay verifies and settles it once (per transaction
 *      signature, and per payment-identifier id under the gateway paid); a refusal is (1)
 *      with the reason and nothing is sent.
 *   3. Paid: the call is admitted as a bearer request of the JWT the payment earned is
 *      (engine.authorize: a subscription still serving, a pay-as-you-go chunk metered, a
 *      prepaid price drawn from the credit), so a tool sold per call is charged per call
 *      whichever scheme paid it; a refused admission is (1) with the reason. Then the
 *      handler runs; its result carries `_meta["x402/payment-response"]`, the standard
 *      SettleResponse {success: true, transaction, network, payer, extra: {policy,
 *      requirementId, scheme, created, expiresAt}}. A metered chunk is charged only when
 *      the handler answered (engine.answered).
 *
 * A payment's proof is answered once (engine.pay, spent-proofs.ts): an identical payload sent
 * again (a copy from a transcript) is (1) and admits nothing, so it meters nothing to the payer.
 * The payer's agent signs each call: the same transaction with a fresh proof is answered from
 * the stored settlement (nothing is sent twice) and admitted again, as a bearer request is.
 *
 * Settlement comes before the tool runs (as the HTTP middleware's does): a handler that
 * fails after payment answers `isError` with the receipt still in `_meta`, so the payer
 * knows what it paid. Error texts are the engine's refusal reasons or a fixed sentence:
 * an unexpected error's message (a store's, which could name a host) never reaches the client.
 */
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { AppError } from '../../../src/kernel/http/errors.js';
import type { PaymentEngine, X402Grant } from '../engine.js';
import type { SettledResult } from '../idempotency.js';
import type { PaymentRequirement, PaymentRequirementInput } from '../requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../requirement-forms.js';
import { standardPayloadFromJson, tributaryPayment, type PaymentRequired, type SettleResponse } from '../standard/codec.js';
import { standardPaymentRequired } from '../standard/requirements.js';
import { standardSettlement } from '../standard/settled.js';

/** The `_meta` keys of the x402 MCP transport. */
export const MCP_PAYMENT = 'x402/payment';
export const MCP_PAYMENT_RESPONSE = 'x402/payment-response';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What the handler of a paid call learns: the settlement and the requirement paid. */
export interface PaidCall {
  requirement: PaymentRequirement;
  settled: SettledResult;
  receipt: SettleResponse;
  /** the admission of this call (engine.authorize): the payer, the policy, what was metered or drawn */
  grant: X402Grant;
}

export interface PaidToolConfig<Args extends ZodRawShapeCompat | undefined> {
  title?: string;
  description: string;
  inputSchema?: Args;
  /** the URL the payer's proof names; default mcp://tool/<name> */
  resource?: string;
  /** the media type of the paid answer, as PaymentRequired.resource says it; default application/json */
  mimeType?: string;
  /** a local engine caps each subscription's grace at this (SUBSCRIPTION_GRACE_SECONDS) */
  graceCapSeconds?: number;
  /** what one call costs in smallest units: the pay-as-you-go chunk or the prepaid draw (default the requirement's own) */
  price?: (args: unknown) => bigint | undefined;
  /** told of unexpected failures, whose text never reaches the client */
  onError?: (err: unknown) => void;
}

type Handler<Args extends ZodRawShapeCompat | undefined> = Args extends ZodRawShapeCompat
  ? (args: Parameters<ToolCallback<Args>>[0], paid: PaidCall, extra: ToolExtra) => Promise<CallToolResult>
  : (paid: PaidCall, extra: ToolExtra) => Promise<CallToolResult>;

/** A tool result that asks for payment (spec: PaymentRequired in structuredContent and as JSON in content[0].text). */
export function paymentRequiredResult(required: PaymentRequired): CallToolResult {
  return {
    isError: true,
    structuredContent: required,
    content: [{ type: 'text', text: JSON.stringify(required) }],
  };
}

/** The requirements normalized once (as the middleware does), and the 402 tool result of a reason. */
export function toolPayments(name: string, inputs: readonly PaymentRequirementInput[], engine: Pick<PaymentEngine, 'programId' | 'clock'>, c: Pick<PaidToolConfig<undefined>, 'resource' | 'mimeType' | 'description' | 'graceCapSeconds'>) {
  if (inputs.length === 0) throw new Error(`paid tool ${name} needs at least one requirement`);
  const requirements = inputs.map((i) => normalizeRequirement(i, engine.programId, c.graceCapSeconds));
  const resource = c.resource ?? `mcp://tool/${name}`;
  const required = (reason: string): CallToolResult => {
    const accepts = requirements.map((r) => acceptedRequirement(r, resource, Math.floor(engine.clock.now() / 1000)));
    return paymentRequiredResult(standardPaymentRequired(accepts, resource, reason, { description: c.description, mimeType: c.mimeType ?? 'application/json' }));
  };
  return { requirements, resource, required, byId: new Map(requirements.map((r) => [r.id, r])) };
}

/**
 * A failure as an MCP client may read it, undefined when it may read nothing of it: the
 * service's typed errors keep their message, except that an unreachable upstream's is cut
 * at its detail (`...: <what the driver said>`, which can name a host or a URL with a key).
 */
export function clientMessage(err: unknown): string | undefined {
  if (!(err instanceof AppError) || err.kind === 'internal') return undefined;
  if (err.kind !== 'upstream_unavailable') return err.message;
  return `${err.message.split(': ')[0] ?? 'a service this depends on did not answer'}; try again`;
}

export function paidTool<Args extends ZodRawShapeCompat | undefined = undefined>(
  server: McpServer, name: string, config: PaidToolConfig<Args>, inputs: readonly PaymentRequirementInput[], engine: PaymentEngine, handler: Handler<Args>,
): void {
  const t = toolPayments(name, inputs, engine, config);

  async function invoke(args: unknown, extra: ToolExtra): Promise<CallToolResult> {
    const sent = extra._meta?.[MCP_PAYMENT];
    if (sent === undefined) return t.required(`payment required: send a PaymentPayload in _meta["${MCP_PAYMENT}"]`);
    const decoded = standardPayloadFromJson(sent, `_meta["${MCP_PAYMENT}"]`);
    if (!decoded.ok) return t.required(decoded.reason);
    const payment = tributaryPayment(decoded.payload);
    if (!payment.ok) return t.required(payment.reason);
    const r = t.byId.get(payment.payment.id);
    if (!r) return t.required(`the payment names requirement ${payment.payment.id}, which this tool does not accept`);
    let paid;
    try {
      paid = await engine.pay(payment.payment, r, t.resource, r.gateway);
    } catch (err) {
      const reason = clientMessage(err);
      if (reason === undefined) config.onError?.(err);
      return t.required(reason ?? 'the payment could not be settled (internal error); nothing was charged twice, try again');
    }
    if (!paid.ok) return t.required(paid.reason);
    const receipt = standardSettlement(paid.result, r);
    const meta = { [MCP_PAYMENT_RESPONSE]: receipt };
    let grant: X402Grant | string;
    try {
      grant = await engine.authorize(paid.result.body.jwt, (c) => t.byId.get(c.requirementId), config.price?.(args));
    } catch (err) {
      const reason = clientMessage(err);
      if (reason === undefined) config.onError?.(err);
      return t.required(reason ?? 'the call could not be admitted (internal error); try again');
    }
    // settled but not admitted (a period's cap reached, a credit spent): the refusal carries the receipt of what was paid
    if (typeof grant === 'string') return { ...t.required(grant), _meta: meta };
    const call: PaidCall = { requirement: r, settled: paid.result, receipt, grant };
    let served = false;
    try {
      const out = await (args === undefined
        ? (handler as (p: PaidCall, e: ToolExtra) => Promise<CallToolResult>)(call, extra)
        : (handler as (a: unknown, p: PaidCall, e: ToolExtra) => Promise<CallToolResult>)(args, call, extra));
      served = out.isError !== true;
      return { ...out, _meta: { ...out._meta, ...meta } };
    } catch (err) {
      config.onError?.(err);
      return { isError: true, content: [{ type: 'text', text: 'the tool failed after the payment settled; the receipt is in _meta' }], _meta: meta };
    } finally {
      await engine.answered(grant, served);
    }
  }

  const base = { description: config.description, ...(config.title !== undefined ? { title: config.title } : {}) };
  if (config.inputSchema === undefined) {
    server.registerTool(name, base, (extra: ToolExtra) => invoke(undefined, extra));
  } else {
    const schema: ZodRawShapeCompat = config.inputSchema;
    const cb: ToolCallback<ZodRawShapeCompat> = (args, extra) => invoke(args, extra);
    server.registerTool(name, { ...base, inputSchema: schema }, cb);
  }
}
