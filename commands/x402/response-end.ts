/**
 * When a metered request counts as served: its response finished, or its connection closed
 * after the response had begun (the upstream answered; the client left mid-body). A
 * response that never began (the upstream hung, failed before answering, or the client
 * gave up waiting) was not served, and its chunk is not charged.
 *
 * A response may be over before it is watched: the client left while its chunk was being
 * metered (Redis, then the ledger's row), so 'close' fired before the grant came back, and fires
 * no more. It is answered at once, as unserved: waiting for an event that never comes kept its
 * row's number open, and with it every later served mark of the process, until the reservation's
 * bound (served-marks.ts).
 */
import type { ServerResponse } from 'node:http';

/** Calls `ended(served)` once, when the response is over. */
export function onResponseEnd(res: ServerResponse, ended: (served: boolean) => void): void {
  let done = false;
  const end = (): void => {
    if (done) return;
    done = true;
    ended(res.writableFinished || res.headersSent);
  };
  if (res.writableFinished || res.closed) {
    end();
    return;
  }
  res.once('finish', end);
  res.once('close', end);
}
