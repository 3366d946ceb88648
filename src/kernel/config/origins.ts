/**
 * CORS_ORIGINS: the origins a browser may call the API from (infra/http/cors.ts answers
 * them). Its default is the service's own origin; each entry is `*` or an origin.
 */

/** `*`, or the origin (scheme://host[:port]) an entry names; undefined when it names neither. */
export function corsOriginOf(value: string): string | undefined {
  if (value === '*') return '*';
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    // an origin, not a URL with a path, a query or credentials: such a typo would otherwise allow nothing, silently
    if (u.username || u.password || u.search || u.hash || u.pathname !== '/') return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/** The service's own origin: PUBLIC_BASE_URL's, else http://localhost:PORT. */
export function ownOrigin(publicUrl: string | undefined, port: number): string {
  if (publicUrl !== undefined) {
    try {
      const { origin } = new URL(publicUrl);
      if (origin !== 'null') return origin;
    } catch { /* not a URL: the port's origin */ }
  }
  return `http://localhost:${port}`;
}
