/**
 * The requirement a checkout session sells: an `accepts` entry as a 402 answer carries it,
 * normalized by the x402 engine's own normalizer (commands/x402/requirements.ts), so terms
 * the engine would refuse at pay time are refused when the session is created.
 *
 * Amounts: a JSON number or a string of digits is in base units (as an `accepts` entry
 * carries them); a string with a decimal point ("12.5", "12.0") is in whole tokens and is
 * converted exactly with the mint's decimals read from the chain. Every amount field
 * (amount and the scheme's caps and prices) follows the same rule.
 *
 * What is stored is the input with amounts as base-unit strings and the resource fixed
 * (the session's page when the entry names none); the requirement is normalized again from
 * it on each use, so every node sells exactly the same terms under the same id.
 */
import { invalid, forbidden } from '../../src/kernel/http/errors.js';
import { RequirementError, type AcceptedRequirement, type PaymentRequirement, type PaymentRequirementInput } from '../x402/requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../x402/requirement-forms.js';

/** The mint's decimals and the exact decimal conversion (the skill document's, wired by the composition root). */
export interface MintAmounts {
  /** throws an AppError: 404 not a mint, 503 the chain did not answer */
  decimals(mint: string): Promise<number>;
  /** throws on a malformed amount or more decimal places than the mint has */
  toBaseUnits(amount: string, decimals: number): bigint;
  formatBaseUnits(units: bigint, decimals: number): string;
}

/** The fields normalizeRequirement reads; anything else in the entry is kept and shown back. */
const TERMS = [
  'scheme', 'network', 'amount', 'recipient', 'gateway', 'tokenMint', 'currency', 'resource', 'description', 'memo',
  'paymentFrequency', 'autoRenew', 'maxRenewals', 'gracePeriodSeconds', 'maxAmountPerPeriod', 'periodLengthSeconds',
  'maxChunkAmount', 'maxUnsettledAmount', 'minExpirySeconds', 'maxTimeoutSeconds', 'pricePerRequest',
] as const;
const AMOUNTS = ['amount', 'maxAmountPerPeriod', 'maxChunkAmount', 'maxUnsettledAmount', 'pricePerRequest'] as const;
/** recomputed from the terms (or of the moment a 402 was answered): never taken from the entry */
const COMPUTED = new Set(['id', 'extra', 'maxAmount', 'validAfter', 'deadline']);

export interface StoredRequirement {
  input: PaymentRequirementInput;
  /** the entry's other fields, kept as given */
  kept: Record<string, unknown>;
}

export interface RequirementContext { programId: string; graceCapSeconds: number }

function baseUnitsOf(v: unknown, field: string, decimals: () => Promise<number>, amounts: MintAmounts): Promise<string | undefined> | string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') throw invalid(`requirement.${field} must be a number of base units or a decimal string such as "12.5"`);
  if (/^\d+$/.test(v)) return v;
  return decimals().then((d) => {
    try {
      return amounts.toBaseUnits(v, d).toString();
    } catch (err) {
      throw invalid(`requirement.${field}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
}

/** The requirement the stored input stands for (throws RequirementError when it no longer normalizes). */
export function requirementOf(s: StoredRequirement, ctx: RequirementContext): PaymentRequirement {
  return normalizeRequirement(s.input, ctx.programId, ctx.graceCapSeconds);
}

/** The `accepts` entry the session sells now (an upto window starts now), with the kept fields. */
export function acceptedOf(s: StoredRequirement, ctx: RequirementContext, nowSeconds: number): AcceptedRequirement {
  const r = requirementOf(s, ctx);
  return { ...s.kept, ...acceptedRequirement(r, r.resource ?? '', nowSeconds) };
}

/**
 * The body's requirement, checked: 400 when it is no requirement the engine would sell,
 * 403 when its gateway is not the caller's (undefined: a quote, anyone's). `resource` is
 * the session page's URL, the resource when the entry names none (the payer's proof signs it).
 */
export async function parseRequirement(
  raw: Record<string, unknown>, callerGateway: string | undefined, resource: string, ctx: RequirementContext, amounts: MintAmounts,
): Promise<{ stored: StoredRequirement; requirement: PaymentRequirement }> {
  const input: Record<string, unknown> = {};
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if ((TERMS as readonly string[]).includes(k)) input[k] = v;
    else if (!COMPUTED.has(k)) kept[k] = v;
  }
  const extra = raw['extra'] as { programId?: unknown } | undefined;
  if (extra?.programId !== undefined && extra.programId !== ctx.programId) {
    throw invalid(`requirement.extra.programId is ${JSON.stringify(extra.programId)}; this service's program is ${ctx.programId}`);
  }
  if (typeof input['tokenMint'] !== 'string') throw invalid('requirement.tokenMint is required');
  const mint = input['tokenMint'];
  let known: Promise<number> | undefined;
  const decimals = () => (known ??= amounts.decimals(mint));
  for (const f of AMOUNTS) {
    const units = await baseUnitsOf(input[f], f, decimals, amounts);
    if (units !== undefined) input[f] = units;
  }
  if (input['resource'] === undefined) input['resource'] = resource;
  let requirement: PaymentRequirement;
  try {
    requirement = normalizeRequirement(input as unknown as PaymentRequirementInput, ctx.programId, ctx.graceCapSeconds);
  } catch (err) {
    if (err instanceof RequirementError) throw invalid(err.message);
    throw err;
  }
  if (callerGateway !== undefined && requirement.gateway !== callerGateway) throw forbidden(`the requirement's gateway ${requirement.gateway} is not the caller's (${callerGateway})`);
  if (requirement.amount > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid('requirement.amount exceeds 2^53 - 1 base units');
  // the mint must exist on this chain, as the payer's transaction needs it
  await decimals();
  return { stored: { input: input as unknown as PaymentRequirementInput, kept }, requirement };
}
