/**
 * The SSRF guard of outbound requests to user-supplied URLs (webhook targets).
 *
 * Only global unicast addresses are allowed: private (10/8, 172.16/12, 192.168/16),
 * loopback, link-local (169.254/16, where cloud metadata lives at 169.254.169.254;
 * fe80::/10), unique-local (fc00::/7, e.g. fd00:ec2::254), carrier-grade NAT (100.64/10,
 * e.g. 100.100.100.200), unspecified, multicast, broadcast, reserved and documentation
 * ranges, and IPv6 forms that embed an IPv4 address other than as a plain mapping
 * (NAT64, 6to4, Teredo, and IPv4-compatible ::/96) are refused. IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as its
 * IPv4 address. ipaddr.js names the ranges, so no CIDR table is written here.
 *
 * Two checks, because a name can resolve differently later (DNS rebinding):
 *  - `checkTarget` when a URL is accepted (webhook creation);
 *  - `guardedLookup` at connection time: the socket's own `lookup`, so the address that
 *    is checked is the address that is connected to. IP literals never reach a lookup,
 *    so `checkLiteralHost` covers them before connecting.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/** The range that forbids an address (ipaddr.js's name: loopback, private, linkLocal…), or undefined for global unicast. */
export function blockedRange(address: string): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return 'unparseable';
  }
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  // IPv4-compatible IPv6 (::/96, deprecated by RFC 4291): `http://[::127.0.0.1]/` reaches
  // 127.0.0.1 on some stacks, and the URL parser spells it ::7f00:1, which ipaddr.js calls unicast
  const range = ip.range();
  if (range === 'unicast' && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return 'ipv4Compatible';
  return range === 'unicast' ? undefined : range;
}

const refused = (host: string, address: string, range: string): TargetRefused =>
  new TargetRefused(host === address
    ? `target refused: ${address} is a ${range} address`
    : `target refused: ${host} resolves to ${address}, a ${range} address`);

/** The hostname of a URL without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Throws TargetRefused when the URL's host is an IP literal that is not allowed. */
export function checkLiteralHost(url: URL): void {
  const host = bareHost(url);
  if (isIP(host) === 0) return;
  const range = blockedRange(host);
  if (range) throw refused(host, host, range);
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/**
 * Throws TargetRefused when the URL's host is, or resolves to, a refused address (every
 * address of the name must be allowed: a client may connect to any of them) or does not
 * resolve at all.
 */
export async function checkTarget(url: URL, resolve: Resolver = systemResolver): Promise<void> {
  checkLiteralHost(url);
  const host = bareHost(url);
  if (isIP(host) !== 0) return;
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    throw new TargetRefused(`target refused: ${host} does not resolve (${(err as { code?: string }).code ?? 'lookup failed'})`);
  }
  if (addresses.length === 0) throw new TargetRefused(`target refused: ${host} does not resolve`);
  for (const a of addresses) {
    const range = blockedRange(a.address);
    if (range) throw refused(host, a.address, range);
  }
}

/**
 * A `lookup` for sockets (http.request's `lookup` option) that fails the connection
 * when the name resolves to a refused address: the check and the connection use the same
 * answer, so a name cannot pass the check and then point elsewhere.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) { callback(err, '', 0); return; }
    const list = addresses;
    const bad = list.find((a) => blockedRange(a.address) !== undefined);
    if (bad !== undefined || list.length === 0) {
      const e = bad ? refused(hostname, bad.address, blockedRange(bad.address)!) : new TargetRefused(`target refused: ${hostname} does not resolve`);
      callback(Object.assign(e, { code: 'ESSRF' }), '', 0);
      return;
    }
    if (options.all) { callback(null, list); return; }
    const first = list[0]!;
    callback(null, first.address, first.family);
  });
};
