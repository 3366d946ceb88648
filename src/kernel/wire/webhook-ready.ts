/**
 * The webhook fast path's protocol between the webhooks projection (which pushes) and the
 * delivery workers (which pop). The fast path of a first attempt (docs/merchants.md, "Webhooks for merchants"): after its
 * transaction commits, the webhooks projection pushes one entry per event to a Redis list
 * (`webhookReadyKey`) that delivery workers pop (LMPOP: each entry to exactly one worker),
 * so a first attempt needs no claim. The durable truth is a fan-out row (migration 0996):
 * the event's webhooks on the fast path, leased (lease_until) for the lease the workers
 * ask for. The worker writes each delivery's outbox row once its first attempt's outcome
 * is known, and deletes the fan-out when all are written; a push that is lost (a crash
 * between commit and push, a Redis restart, a trimmed list) or a worker that dies leaves
 * the fan-out to be expanded into due outbox rows once its lease ends, for the ordinary
 * claim (commands/webhooks/delivery/fanouts.ts).
 *
 * Only while a worker says it pops (`webhookPoppersKey`, refreshed while it runs, holding
 * the lease in ms: one attempt's, and a margin for the time in the list) and only for
 * endpoints the claim need not arbitrate: not ordered, no rate limit, not paused by a
 * receiver, no failure streak. The rest, and every later attempt, go through the claim.
 */

/** How long a worker's "I pop" lasts unless refreshed. */
export const POPPERS_TTL_MS = 3_000;
/** Entries kept at most in the list (the oldest go first; their rows wait out the lease). */
export const READY_LIST_MAX = 20_000;

/** One pushed event (JSON in the list). */
export interface ReadyEntry {
  /** the fan-out row's id */
  f: string;
  /** event id (the webhook-id) and name */
  e: string;
  n: string;
  /** the payload's JSON text, spliced into the body as it is */
  p: string;
  /** the payload's `timestamp`, when it is a string */
  t: string | null;
  /** the fan-out's created_at (ISO 8601), its deliveries' */
  c: string;
  /** when the fan-out's lease ends, in ms since the epoch (the database's clock) */
  u: number;
  /** the webhooks */
  w: number[];
}
