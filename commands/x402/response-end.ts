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

/**
 * Calls `ended(served)` once, when the response is over: on its 'close', which a server response
 * emits once, after 'finish' when it completed and alone when its connection went first. One
 * plain listener: the two once-listeners this used to add cost the bearer path some 4 µs a
 * request in their wrapping and removal (the x402 bench's profile).
 */
export function onResponseEnd(res: ServerResponse, ended: (served: boolean) => void): void {
  if (res.closed) {
    ended(res.writableFinished || res.headersSent);
    return;
  }
  res.on('close', () => ended(res.writableFinished || res.headersSent));
}
