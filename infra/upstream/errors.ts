/**
 * The one failure type of every upstream call (token catalog, pool venues), so callers
 * can degrade on "the upstream did not answer usefully" without caring how it failed.
 */
export type UpstreamFailure =
  /** no answer within the timeout */
  | 'timeout'
  /** connection refused, reset, DNS */
  | 'network'
  /** a non-2xx status */
  | 'http'
  /** a 2xx body that is not the documented shape */
  | 'invalid'
  /** the circuit breaker is open: the call was not attempted */
  | 'open'
  /** no base URL configured */
  | 'unconfigured';

export class UpstreamError extends Error {
  constructor(
    readonly upstream: string,
    readonly failure: UpstreamFailure,
    message: string,
    readonly status?: number,
  ) {
    super(`${upstream}: ${message}`);
    this.name = 'UpstreamError';
  }
}
