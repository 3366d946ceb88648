/**
 * The URL of a registered resource, normalized before it is stored or compared: the WHATWG
 * parser's form (scheme and host lower-cased, the host in punycode, the default port
 * dropped, dot segments resolved), with an empty query and a trailing dot of the host
 * dropped and percent escapes in upper case, so `HTTPS://API.EXAMPLE/report` and
 * `https://api.example./report?` are one resource. Only `https:`; `http:` only on a
 * loopback host and only where the deployment allows it (development, tests). No
 * credentials, no fragment, no control characters or surrounding whitespace. What
 * discovery publishes is what an agent will pay for, so anything else is refused with the
 * reason.
 */
import { invalid } from '../../../src/kernel/http/errors.js';

export interface ResourceUrlPolicy {
  /** X402_DISCOVERY_ALLOW_HTTP_LOOPBACK */
  allowHttpLoopback: boolean;
  /** origins of this service: no gateway registers resources on them */
  ownOrigins: readonly string[];
}

export interface ResourceUrl { resource: string; origin: string }

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** 127.0.0.0/8, ::1 and localhost (and its subdomains, RFC 6761), as the parser spells them. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

const upperEscapes = (s: string): string => s.replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase());

/** The normalized URL and its origin, or a 400 saying why the URL cannot be a resource. */
export function normalizeResourceUrl(raw: string, policy: ResourceUrlPolicy): ResourceUrl {
  const refuse = (why: string) => invalid(`resource ${JSON.stringify(raw.slice(0, 200))} refused: ${why}`, { field: 'resource', reason: why });
  if (CONTROL.test(raw)) throw refuse('control characters are not allowed');
  // the parser would drop it silently: what was sent is not what would be stored
  if (raw.trim() !== raw) throw refuse('surrounding whitespace is not allowed');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not an absolute URL');
  }
  if (url.username !== '' || url.password !== '') throw refuse('credentials (user:pass@) are not allowed');
  if (url.href.includes('#')) throw refuse('a fragment (#) is not allowed');
  if (url.hostname.endsWith('.')) url.hostname = url.hostname.slice(0, -1);
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) throw refuse('only https URLs are accepted');
    if (!policy.allowHttpLoopback) throw refuse('only https URLs are accepted (http on a loopback host only where X402_DISCOVERY_ALLOW_HTTP_LOOPBACK is set)');
  } else if (url.protocol !== 'https:') {
    throw refuse('only https URLs are accepted');
  }
  if (url.hostname === '') throw refuse('no host');
  if (url.search === '') url.search = '';
  url.pathname = upperEscapes(url.pathname);
  if (url.search !== '') url.search = upperEscapes(url.search);
  if (policy.ownOrigins.includes(url.origin)) throw refuse('resources on this service\'s own origin are not registered by gateways');
  return { resource: url.href, origin: url.origin };
}

/** The origin of a URL given to the verify route: the same rules, any path. */
export function normalizeOrigin(raw: string, policy: ResourceUrlPolicy): string {
  return normalizeResourceUrl(raw, policy).origin;
}
