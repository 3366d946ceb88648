/**
 * Which of the Api's GET routes express's router would run for a URL, found without
 * express, so that `front` (cached-hits.ts) can answer a list route's miss itself.
 *
 * The router (express 5: router 2, path-to-regexp 8) tries the routes in the order they
 * were declared, matching the raw pathname (not decoded), case-insensitively, with an
 * optional trailing slash; a `:name` segment is one or more characters other than `/`,
 * decoded with decodeURIComponent (a malformed escape is its 400). `claim` answers only
 * what it can tell for certain, and undefined for anything else, which express then
 * answers as always: a URL with a trailing slash, an empty segment, a character that
 * makes parseurl take its slow path, a param that does not decode, or a URL that an
 * earlier route of a syntax this file does not read (wildcards, optional groups) might
 * match.
 */

/** A route's path: its segments, literal (lower case) or a param's name. */
export type PathPattern = readonly ({ literal: string } | { param: string })[];

/** The path's pattern; undefined for syntax beyond literal and `:name` segments. */
export function compilePath(path: string): PathPattern | undefined {
  if (!path.startsWith('/') || /[*?{}()+\\]/.test(path)) return undefined;
  const out: ({ literal: string } | { param: string })[] = [];
  for (const s of path.slice(1).split('/')) {
    if (s === '') return undefined;
    if (s.startsWith(':')) {
      const name = s.slice(1);
      if (!/^[A-Za-z_$][\w$]*$/.test(name)) return undefined;
      out.push({ param: name });
    } else if (s.includes(':')) {
      return undefined;
    } else {
      out.push({ literal: s.toLowerCase() });
    }
  }
  return out;
}

/** parseurl's fast path takes URLs without these (its slow path, url.parse, may rewrite them). */
const SLOW_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/** A URL's raw pathname segments and its query string; undefined when parseurl could read it otherwise, or for a trailing slash or empty segment. */
export function splitUrl(url: string): { segments: string[]; search: string } | undefined {
  if (url.charCodeAt(0) !== 47 /* / */ || SLOW_URL.test(url)) return undefined;
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  const segments = pathname.slice(1).split('/');
  if (segments.includes('')) return undefined;
  return { segments, search: q < 0 ? '' : url.slice(q + 1) };
}

/**
 * Matches a split pathname against a pattern: the decoded params, or undefined when it
 * does not match; null when it matches but a param does not decode (express's 400).
 */
export function matchPath(p: PathPattern, segments: readonly string[]): Record<string, string> | undefined | null {
  if (p.length !== segments.length) return undefined;
  let params: Record<string, string> | undefined;
  for (let i = 0; i < p.length; i += 1) {
    const part = p[i]!;
    const s = segments[i]!;
    if ('literal' in part) {
      if (s.length !== part.literal.length || s.toLowerCase() !== part.literal) return undefined;
    } else {
      (params ??= {})[part.param] = s;
    }
  }
  if (params === undefined) return {};
  for (const name of Object.keys(params)) {
    try {
      params[name] = decodeURIComponent(params[name]!);
    } catch {
      return null;
    }
  }
  return params;
}
