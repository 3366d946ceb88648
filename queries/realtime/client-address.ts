/**
 * The client address a socket's slots are counted under, as the HTTP routes count it
 * (infra/http/rate-limit.ts's clientKey: IPv4, or the IPv6 /64). X-Forwarded-For is read
 * only as far as TRUST_PROXY trusts it: `true` takes the leftmost address, a hop count n
 * the n-th from the right, and a list of proxy addresses walks from the right past those
 * (exact addresses; subnets and express's named ranges are not interpreted here, so such
 * a setting counts the nearest proxy instead).
 */
import type { IncomingMessage } from 'node:http';
import { clientKey } from '../../infra/http/rate-limit.js';

export function clientAddress(req: IncomingMessage, trustProxy: string): string {
  const remote = req.socket.remoteAddress ?? 'unknown';
  const header = req.headers['x-forwarded-for'];
  const text = Array.isArray(header) ? header.join(',') : header;
  if (trustProxy === 'false' || trustProxy === '' || !text) return clientKey(remote);
  // nearest first: the peer, then the forwarded addresses from right to left
  const chain = [remote, ...text.split(',').map((s) => s.trim()).filter((s) => s !== '').reverse()];
  let picked: string;
  if (trustProxy === 'true') picked = chain[chain.length - 1]!;
  else if (/^\d+$/.test(trustProxy)) picked = chain[Math.min(Number(trustProxy), chain.length - 1)]!;
  else {
    const trusted = new Set(trustProxy.split(',').map((s) => s.trim()));
    let i = 0;
    while (i < chain.length - 1 && trusted.has(chain[i]!)) i += 1;
    picked = chain[i]!;
  }
  return clientKey(picked);
}
