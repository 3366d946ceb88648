/**
 * Which of the Api's routes express's router would run for a URL, found without express,
 * so that `front` (cached-hits.ts) can answer a list route's miss itself.
 *
 * The router (express 5: router 2) matches each route's path with path-to-regexp's
 * `match`, against the raw pathname parseurl gives, with options that follow its own
 * (caseSensitive, strict), and decodes a param with decodeURIComponent only when it holds
 * a `%` (a malformed escape is its 400). `routeMatcher` builds the same matcher from the
 * same library, so front accepts and refuses exactly the pathnames the router does, its
 * case, trailing slash, empty segments and escapes included. What front cannot tell for
 * certain it leaves to express: a URL parseurl would read on its slow path, and a param
 * that does not decode.
 */
import { match } from 'path-to-regexp';

/** The options of express.Router() that decide how its routes match (the router keeps them on itself). */
export interface RouterMatching {
  caseSensitive?: boolean;
  strict?: boolean;
}

/** A route's params when its path matches the pathname, else false; throws where the router fails to decode a param. */
export type RouteMatcher = (pathname: string) => Record<string, string | string[]> | false;

/** The router's param decoding: untouched without a `%`, else decodeURIComponent, which throws on a malformed escape. */
const decodeParam = (value: string): string => (value.includes('%') ? decodeURIComponent(value) : value);

/** The matcher the router builds for a route declared at `path` (router's Layer, with end: true). */
export function routeMatcher(path: string, how: RouterMatching): RouteMatcher {
  const strict = how.strict === true;
  // a non-strict router drops the declared path's trailing slashes and lets the URL have one
  const declared = strict || path === '/' ? path : path.replace(/\/+$/, '');
  const m = match<Record<string, string | string[]>>(declared, { sensitive: how.caseSensitive === true, end: true, trailing: !strict, decode: decodeParam });
  return (pathname) => {
    const found = m(pathname);
    return found === false ? false : found.params;
  };
}

/** parseurl's fast path takes URLs without these (its slow path, url.parse, may rewrite them). */
const SLOW_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/** A URL's raw pathname and its query string, as parseurl reads them; undefined when parseurl could read it otherwise. */
export function splitUrl(url: string): { pathname: string; search: string } | undefined {
  if (url.charCodeAt(0) !== 47 /* / */ || SLOW_URL.test(url)) return undefined;
  const q = url.indexOf('?');
  return q < 0 ? { pathname: url, search: '' } : { pathname: url.slice(0, q), search: url.slice(q + 1) };
}

/** A route of the router, in the order it was declared: its matcher, and whether it answers GET. */
export interface DeclaredRoute { match: RouteMatcher; get: boolean }

/**
 * The GET route the router would run for a URL, with its decoded params and the query
 * string; undefined when no route matches, or when the router would answer otherwise: a
 * URL parseurl reads on its slow path, or a param that does not decode in any route
 * matched before (of any method: the router matches every route's path before it looks
 * at the method, and a decoding error ends the search with its 400).
 */
export function findGet<R extends DeclaredRoute>(routes: readonly R[], url: string): { route: R; params: Record<string, string | string[]>; search: string } | undefined {
  const split = splitUrl(url);
  if (split === undefined) return undefined;
  for (const route of routes) {
    let params: Record<string, string | string[]> | false;
    try {
      params = route.match(split.pathname);
    } catch {
      return undefined;
    }
    if (params !== false && route.get) return { route, params, search: split.search };
  }
  return undefined;
}
