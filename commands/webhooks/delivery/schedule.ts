/**
 * When a delivery is tried, as pure functions of the configuration.
 *
 * Round 0 is the first try with its quick retries (WEBHOOK_RETRY_DELAYS_MS, SPEC: up to
 * 3 retries, 1 s, 2 s, 3 s), run by one worker. When they all fail, the delivery is kept
 * and tried once more after each delay of the slow schedule (WEBHOOK_SLOW_SCHEDULE_MS:
 * rounds 1..n, our extension beyond SPEC), and marked dead when the last one fails. An
 * empty slow schedule is SPEC's exact behaviour: dead once the third retry fails.
 *
 * Leases. A worker holds a delivery only for what its next step can take: one attempt
 * (the timeout) plus a margin, renewed before each quick retry to cover the delay and the
 * next attempt. A worker that dies loses the row within one lease, and another takes it.
 */
export interface ScheduleConfig {
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  slowScheduleMs: readonly number[];
}

export type AfterFailure =
  | { status: 'pending'; round: number; delayMs: number }
  | { status: 'dead' };

/** Quick retry delays of a round: only the first round has them. */
export function quickDelays(cfg: ScheduleConfig, round: number): readonly number[] {
  return round === 0 ? cfg.retryDelaysMs : [];
}

/** What follows when the last attempt of `round` failed. */
export function afterFailedRound(cfg: ScheduleConfig, round: number): AfterFailure {
  const delayMs = cfg.slowScheduleMs[round];
  return delayMs === undefined ? { status: 'dead' } : { status: 'pending', round: round + 1, delayMs };
}

/** Margin over the timeout for the database round trips around an attempt. */
export function leaseMarginMs(cfg: ScheduleConfig): number {
  return Math.max(1000, Math.round(cfg.timeoutMs / 2));
}

/** The lease taken at claim: one attempt. */
export function claimLeaseMs(cfg: ScheduleConfig): number {
  return cfg.timeoutMs + leaseMarginMs(cfg);
}

/** The lease renewed before a quick retry: the delay, then one attempt. */
export function retryLeaseMs(cfg: ScheduleConfig, delayMs: number): number {
  return delayMs + cfg.timeoutMs + leaseMarginMs(cfg);
}
