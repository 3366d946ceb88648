/**
 * When a metered request counts as served: its response finished, or its connection closed
 * after the response had begun (the upstream answered; the client left mid-body). A
 * response that never began (the upstream hung, failed before answering, or the client
 * gave up waiting) was not served, and its chunk is not charged.
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
  res.once('finish', end);
  res.once('close', end);
}
