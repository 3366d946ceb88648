/**
 * A merchant's requirement input made a PaymentRequirement (normalizeRequirement), and the
 * `accepts` entry a requirement is offered as (acceptedRequirement). What every scheme
 * shares is checked here; the requirement's scheme (schemes/) adds its own terms.
 */
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import { PAYMENT_MEMO_BYTES } from '../../src/kernel/domain/memo.js';
import { textToFixedBytes } from '../../src/kernel/events/codec.js';
import {
  positive, RequirementError, SCHEMES, X402_VERSION, type AcceptedRequirement, type PaymentRequirement, type PaymentRequirementInput,
} from './requirements.js';
import { schemeNamed, schemeOf } from './schemes/index.js';

const SYMBOLS: Readonly<Record<string, string>> = {
  EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v: 'USDC',
  '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU': 'USDC',
  Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB: 'USDT',
  So11111111111111111111111111111111111111112: 'SOL',
  mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So: 'mSOL',
};

function key(v: string, what: string): string {
  if (!isPublicKey(v)) throw new RequirementError(`${what} is not a base58 public key: ${JSON.stringify(v)}`);
  return v;
}

/** `graceCapSeconds`: SUBSCRIPTION_GRACE_SECONDS of the service that serves the requirement. */
export function normalizeRequirement(input: PaymentRequirementInput, programId: string, graceCapSeconds?: number): PaymentRequirement {
  if (!(SCHEMES as readonly string[]).includes(input.scheme)) throw new RequirementError(`scheme must be one of ${SCHEMES.join(', ')}`);
  if (!/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(input.network)) throw new RequirementError(`network must be a CAIP-2 id, got ${JSON.stringify(input.network)}`);
  if (input.memo !== undefined && textToFixedBytes(input.memo, PAYMENT_MEMO_BYTES) === undefined) {
    throw new RequirementError(`memo must fit in ${PAYMENT_MEMO_BYTES} bytes`);
  }
  const tokenMint = key(input.tokenMint, 'tokenMint');
  const base = {
    network: input.network,
    programId: key(programId, 'programId'),
    amount: positive(input.amount, 'amount'),
    recipient: key(input.recipient, 'recipient'),
    gateway: key(input.gateway, 'gateway'),
    tokenMint,
    currency: input.currency ?? SYMBOLS[tokenMint] ?? tokenMint,
    ...(input.resource !== undefined ? { resource: input.resource } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.memo !== undefined ? { memo: input.memo } : {}),
  };
  const head = [input.scheme, base.network, base.programId, base.amount.toString(), base.recipient, base.gateway, tokenMint, base.memo ?? ''];
  return schemeNamed(input.scheme).requirement(input, base, head, graceCapSeconds);
}

/** The `accepts` entry of a requirement for a resource; `nowSeconds` dates an upto window. */
export function acceptedRequirement(r: PaymentRequirement, resource: string, nowSeconds = Math.floor(Date.now() / 1000)): AcceptedRequirement {
  const common = {
    scheme: r.scheme, network: r.network, amount: Number(r.amount), recipient: r.recipient, gateway: r.gateway,
    tokenMint: r.tokenMint, currency: r.currency, resource: r.resource ?? resource, id: r.id,
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(r.memo !== undefined ? { memo: r.memo } : {}),
  };
  return { ...common, ...schemeOf(r).accepted(r, nowSeconds), extra: { programId: r.programId, x402Version: X402_VERSION } };
}
