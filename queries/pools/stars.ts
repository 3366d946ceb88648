/**
 * A pool's trust ranking, from the catalog trust tiers of its two tokens. A pool is as
 * trustworthy as its weaker token, so the weaker one decides, the stronger one refines:
 *
 *   stars  tokens (either order)
 *     5    both strict
 *     4    both at least verified (strict or verified), not both strict
 *     3    one community, the other at least verified
 *     2    both community
 *     1    one unknown, the other at least community
 *     0    both unknown
 *
 * A token absent from the catalog counts as unknown. tier1 means both tokens are at
 * least verified (4 or 5 stars).
 */
import type { TrustTier } from '../../infra/upstream/token-catalog.js';

const RANK: Readonly<Record<TrustTier, number>> = { strict: 3, verified: 2, community: 1, unknown: 0 };

export const STARS_RULE = 'stars 0-5 from the catalog trust tiers of the two tokens (strict > verified > community > unknown; '
  + 'a token absent from the catalog is unknown): 5 both strict; 4 both at least verified; 3 one community and one at least verified; '
  + '2 both community; 1 one unknown and one at least community; 0 both unknown. tier1 = both tokens at least verified.';

export function poolTrust(x: TrustTier | null, y: TrustTier | null): { stars: number; tier1: boolean } {
  const rx = RANK[x ?? 'unknown'];
  const ry = RANK[y ?? 'unknown'];
  const weaker = Math.min(rx, ry);
  const stronger = Math.max(rx, ry);
  const stars = weaker === 3 ? 5
    : weaker === 2 ? 4
      : weaker === 1 ? (stronger >= 2 ? 3 : 2)
        : stronger >= 1 ? 1 : 0;
  return { stars, tier1: weaker >= 2 };
}
