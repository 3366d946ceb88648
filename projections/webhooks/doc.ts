/**
 * The fast path of a first attempt (README "Webhooks for merchants"): after its
 * transaction commits, the webhooks projection pushes one entry per event to a Redis list
 * (`webhookReadyKey`) that delivery workers pop (LMPOP: each entry to exactly one worker),
 * so a first attempt needs no claim. The outbox row stays the durable truth: it is written
 * leased to PUSH_HOLDER (next_attempt_at and locked_until) for the lease the workers ask
 * for, so a push that is lost (a crash between commit and push, a Redis restart, a
 * trimmed list) or a worker that dies leaves the row to the ordinary claim once it ends.
 *
 * Only while a worker says it pops (`webhookPoppersKey`, refreshed while it runs, holding
 * the lease in ms: one attempt's, and a margin for the time in the list) and only for
 * endpoints the claim need not arbitrate: not ordered, no rate limit, not paused by a
 * receiver, no failure streak. The rest, and every later attempt, go through the claim.
 */

/** The lease holder of a pushed row until a worker's outcome or the claim moves it. */
export const PUSH_HOLDER = 'push';
/** How long a worker's "I pop" lasts unless refreshed. */
export const POPPERS_TTL_MS = 3_000;
/** Entries kept at most in the list (the oldest go first; their rows wait out the lease). */
export const READY_LIST_MAX = 20_000;

/** One pushed event (JSON in the list). */
export interface ReadyEntry {
  /** event id (the webhook-id) and name */
  e: string;
  n: string;
  /** the payload's JSON text, spliced into the body as it is */
  p: string;
  /** the payload's `timestamp`, when it is a string */
  t: string | null;
  /** the rows' created_at (ISO 8601) */
  c: string;
  /** when the rows' lease ends, in ms since the epoch (the database's clock) */
  u: number;
  /** the deliveries: [delivery id, webhook id] */
  d: [string, number][];
}
