/** `Authorization: Bearer <token>` (RFC 6750): the token, or undefined when absent. */
import { unauthorized } from '../http/errors.js';

/**
 * Returns the bearer token of an Authorization header value; undefined when there is no
 * header; throws 401 when a header is present but is not a well-formed Bearer credential.
 */
export function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const m = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  if (!m?.[1]) throw unauthorized('Authorization header must be "Bearer <token>"');
  return m[1];
}
