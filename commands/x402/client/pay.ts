/**
 * The paying client of the payment-gated protocol:
 *
 *   const { response, paid } = await payAndFetch('http://localhost:3002/v1/x402/demo',
 *     { wallet: Keypair.fromSecretKey(secret), rpcUrl: 'http://127.0.0.1:8899' });
 *
 * 1. With a JWT kept for this URL, the request goes out with `Authorization: Bearer`; any
 *    answer but 402 is returned (a 402 drops the JWT and goes on as below).
 * 2. Without one, a 402's `accepts` is read, a requirement picked (`scheme`, else the
 *    server's first), the transaction built and signed with the wallet
 *    (commands/x402/payment-transaction.ts) and the request repeated with `Payment`.
 * 3. The 200's JWT is kept (in memory, or a file: fileTokenStore) and the request made
 *    once more with it; that answer is returned with what was paid.
 * At most one payment per call: if the bearer request is refused again (a pay-as-you-go
 * period exhausted), that 402 is returned, never paid twice.
 *
 * Every attempt signs anew (a fresh transaction and a fresh proof, buildPayment): the server
 * answers a proof once, so a header is never sent twice. A caller whose answer was lost calls
 * again: the fresh payment is answered with the policy the payer holds (no second policy for a
 * scheme whose policy serves again), and its JWT.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import type { Keypair } from '@solana/web3.js';
import { createRpcClient } from '../../../infra/solana/rpc-client.js';
import type { Commitment } from '../../../infra/solana/chain-reader.js';
import { buildPayment } from '../payment-transaction.js';
import { parseKeyValueHeader, type AcceptedRequirement, type Scheme } from '../requirements.js';
import { isPauseRefusal } from '../../../src/kernel/domain/program-errors.js';

export type { AcceptedRequirement, Scheme };

const PAUSE_WAIT_MS = 30_000;
const PAUSE_RETRY_MS = 1_000;

export interface TokenStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, token: string): Promise<void>;
  delete(key: string): Promise<void>;
}

export function memoryTokenStore(): TokenStore {
  const m = new Map<string, string>();
  return {
    get: async (k) => m.get(k),
    set: async (k, t) => { m.set(k, t); },
    delete: async (k) => { m.delete(k); },
  };
}

/** JWTs kept in a JSON file (mode 0600) between runs: `{ "<origin><path>": "<jwt>" }`. */
export function fileTokenStore(path: string): TokenStore {
  const load = async (): Promise<Record<string, string>> => {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as Record<string, string>;
    } catch {
      return {};
    }
  };
  const save = async (all: Record<string, string>) => {
    await writeFile(path, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
    await chmod(path, 0o600);
  };
  return {
    get: async (k) => (await load())[k],
    set: async (k, t) => save({ ...(await load()), [k]: t }),
    delete: async (k) => {
      const all = await load();
      delete all[k];
      await save(all);
    },
  };
}

export interface PayOptions {
  /** the payer (and fee payer) */
  wallet: Keypair;
  /** the chain the requirement's gateway lives on */
  rpcUrl: string;
  /** preferred scheme; default the server's first requirement */
  scheme?: Scheme;
  /** method, headers and body of the protected request */
  init?: RequestInit;
  tokens?: TokenStore;
  /** how long to wait out an emergency pause of the program, retrying with a fresh transaction; default 30 s, 0 = never */
  pauseWaitMs?: number;
  /** told each time a payment is refused because the program is paused, before the wait */
  onPauseWait?: (reason: string, waitedMs: number) => void;
  commitment?: Commitment;
  rpcTimeoutMs?: number;
  fetch?: typeof fetch;
}

export interface Paid {
  requirement: AcceptedRequirement;
  jwt: string;
  message: string;
  /** the Payment-Response header's pairs (scheme, network, id, timestamp, policy, transaction) */
  paymentResponse: Record<string, string>;
  policy: string | undefined;
  /** the transaction's signature when it was sent (absent when an existing policy served) */
  transaction: string | undefined;
}

export interface PayResult {
  /** the last answer: the content, or the refusal */
  response: Response;
  /** what was paid in this call, if anything */
  paid?: Paid;
  /** true when a kept JWT served without paying */
  usedKeptToken: boolean;
}

export class PaymentFailed extends Error {
  constructor(message: string, readonly response: Response, readonly body: unknown) {
    super(message);
    this.name = 'PaymentFailed';
  }
}

function withHeaders(init: RequestInit | undefined, extra: Record<string, string>): RequestInit {
  const headers = new Headers(init?.headers);
  for (const [k, v] of Object.entries(extra)) headers.set(k, v);
  return { ...init, headers };
}

/** Picks the requirement to pay from a 402 body. */
export function pickRequirement(body: unknown, scheme?: Scheme): AcceptedRequirement {
  const accepts = (body as { accepts?: unknown } | null)?.accepts;
  if (!Array.isArray(accepts) || accepts.length === 0) throw new Error('the 402 answer lists no requirements (accepts)');
  const list = accepts as AcceptedRequirement[];
  const r = scheme ? list.find((a) => a.scheme === scheme) : list[0];
  if (!r) throw new Error(`the resource does not accept scheme ${scheme}; it accepts ${list.map((a) => a.scheme).join(', ')}`);
  return r;
}

export async function payAndFetch(url: string, opts: PayOptions): Promise<PayResult> {
  const doFetch = opts.fetch ?? fetch;
  const tokens = opts.tokens ?? memoryTokenStore();
  const u = new URL(url);
  const key = `${u.origin}${u.pathname}`;

  let challenge: Response | undefined;
  const kept = await tokens.get(key);
  if (kept) {
    const res = await doFetch(url, withHeaders(opts.init, { authorization: `Bearer ${kept}` }));
    if (res.status !== 402) return { response: res, usedKeptToken: true };
    await tokens.delete(key);
    challenge = res;
  }
  challenge ??= await doFetch(url, opts.init);
  if (challenge.status !== 402) return { response: challenge, usedKeptToken: false };

  const requirement = pickRequirement(await challenge.json(), opts.scheme);
  const rpc = createRpcClient({ url: opts.rpcUrl, timeoutMs: opts.rpcTimeoutMs ?? 10_000 });
  const started = Date.now();
  let paidRes: Response;
  let body: { jwt?: string; message?: string; error?: string } | undefined;
  for (;;) {
    // a fresh transaction each attempt: a new blockhash, and the policy id as the chain has it now
    const built = await buildPayment(requirement, { wallet: opts.wallet, rpc, ...(opts.commitment ? { commitment: opts.commitment } : {}) });
    paidRes = await doFetch(url, withHeaders(opts.init, { payment: built.header }));
    body = await paidRes.json().catch(() => undefined) as typeof body;
    const waited = Date.now() - started;
    if (paidRes.status !== 402 || !isPauseRefusal(body?.error) || waited >= (opts.pauseWaitMs ?? PAUSE_WAIT_MS)) break;
    opts.onPauseWait?.(body?.error ?? '', waited);
    await new Promise((r) => setTimeout(r, PAUSE_RETRY_MS));
  }
  if (paidRes.status !== 200 || typeof body?.jwt !== 'string') {
    throw new PaymentFailed(`the payment was refused (HTTP ${paidRes.status}): ${body?.error ?? 'no reason given'}`, paidRes, body);
  }
  await tokens.set(key, body.jwt);
  const paymentResponse = parseKeyValueHeader(paidRes.headers.get('payment-response') ?? '');
  const paid: Paid = {
    requirement, jwt: body.jwt, message: body.message ?? '', paymentResponse,
    policy: paymentResponse['policy'], transaction: paymentResponse['transaction'],
  };
  const response = await doFetch(url, withHeaders(opts.init, { authorization: `Bearer ${body.jwt}` }));
  return { response, paid, usedKeptToken: false };
}
