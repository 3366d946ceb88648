/**
 * The table of payment schemes: one engine per Scheme (schemes/scheme.ts says what an
 * engine is). Typed by Scheme, so a scheme added to SCHEMES (requirements.ts) without an
 * engine here does not compile. The payment engine (engine.ts) and the remote backend
 * (backend.ts) reach a scheme only through `schemeOf`.
 */
import type { PaymentRequirement, Scheme } from '../requirements.js';
import { deferredScheme } from './deferred.js';
import { paygScheme } from './payg.js';
import { prepaidScheme } from './prepaid.js';
import type { RequirementOf, SchemeEngine } from './scheme.js';
import { uptoScheme } from './upto.js';

const SCHEME_ENGINES: { readonly [S in Scheme]: SchemeEngine<RequirementOf<S>> } = {
  'deferred': deferredScheme,
  'x402://payg': paygScheme,
  'x402://upto': uptoScheme,
  'x402://prepaid': prepaidScheme,
};

/**
 * The engine of a requirement's scheme. The table's row for `r.scheme` takes exactly that
 * requirement, a correlation TypeScript cannot follow through an indexed union: hence the
 * one cast, here.
 */
export function schemeOf<R extends PaymentRequirement>(r: R): SchemeEngine<R> {
  return SCHEME_ENGINES[r.scheme] as unknown as SchemeEngine<R>;
}

/** The engine of a scheme by name (a grant names its scheme, not its requirement). */
export function schemeNamed(scheme: Scheme): SchemeEngine<PaymentRequirement> {
  return SCHEME_ENGINES[scheme];
}
