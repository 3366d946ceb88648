/**
 * GET /v1/skill/{encoded}: the checkout session → the mint's decimals from the chain →
 * the exact integer amount → a markdown skill document.
 */
import type { Request } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { invalid, notFound, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { Api } from '../../infra/http/routes.js';
import { MintNotFoundError, readMintDecimals } from '../../infra/solana/mint.js';
import { createSharedCache, type SharedCache } from '../../infra/upstream/shared-cache.js';
import { WELL_KNOWN } from '../assets/overrides.js';
import type { AssetResolveData } from '../assets/model.js';
import { mintKey } from '../assets/lookup.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import { HOSTED_SESSION_ID, hostedTerms } from '../checkout/skill-terms.js';
import { AmountError, formatBaseUnits, toBaseUnits, U64_MAX } from './amount.js';
import { parseSession, SessionError, sessionFromFields, type CheckoutSession } from './session.js';
import { renderSkill, type HostedLink } from './document.js';

/** decimals never change once a mint exists; an hour keeps the chain out of repeat views */
const DECIMALS_TTL_SECONDS = 3600;

export async function mintDecimals(rpc: RpcClient, cache: SharedCache, mint: string, commitment: string): Promise<number> {
  const key = `mint:decimals:${mint}`;
  const hit = await cache.get<number>(key);
  if (typeof hit === 'number') return hit;
  try {
    const decimals = await readMintDecimals(rpc, mint, commitment);
    await cache.set(key, decimals, DECIMALS_TTL_SECONDS);
    return decimals;
  } catch (err) {
    if (err instanceof MintNotFoundError) throw notFound(`unknown mint ${mint}: not a token mint on this chain`);
    throw upstreamUnavailable('the chain did not answer; retry later');
  }
}

/** The skill document's collaborators: the configured chain (a mint's decimals), the shared cache, the hosted checkout sessions. */
export interface SkillRouteDeps { rpc: RpcClient; redis: Redis; dbRead: Db; clock: Clock; config: Pick<Config, 'http' | 'redis' | 'solana'> }

/**
 * A hosted checkout session (cs_…) as the skill document's session, and the link to its
 * page: 404 when there is none, 400 when it sells no subscription (the document tells how
 * to subscribe; the page serves every scheme).
 */
async function hostedSkillSession(ctx: SkillRouteDeps, cache: SharedCache, id: string, baseUrl: string): Promise<{ session: CheckoutSession; link: HostedLink }> {
  const terms = await hostedTerms(ctx.dbRead, id, ctx.clock.now());
  if (!terms) throw notFound(`no checkout session ${id}`);
  const url = `${baseUrl}/checkout/${id}`;
  if (terms.scheme !== 'deferred') throw invalid(`checkout session ${id} sells ${terms.scheme}, not a subscription: open its page ${url}`);
  const decimals = await mintDecimals(ctx.rpc, cache, terms.tokenMint, ctx.config.solana.commitment);
  const session = sessionFromFields({
    tokenMint: terms.tokenMint, recipient: terms.recipient, gateway: terms.gateway, amount: formatBaseUnits(BigInt(terms.amount), decimals),
    paymentFrequency: terms.paymentFrequency, autoRenew: terms.autoRenew, maxRenewals: terms.maxRenewals, trackingId: terms.trackingId,
    memo: terms.memo === terms.trackingId ? undefined : terms.memo, successUrl: terms.successUrl, cancelUrl: terms.cancelUrl,
  });
  return { session, link: { url, status: terms.status, expiresAt: terms.expiresAt } };
}

function baseUrlOf(ctx: SkillRouteDeps, req: Request): string {
  if (ctx.config.http.publicUrl) return ctx.config.http.publicUrl.replace(/\/+$/, '');
  const host = req.get('host') ?? '';
  return /^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host) || /^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/.test(host)
    ? `${req.protocol}://${host}`
    : `http://localhost:${ctx.config.http.port}`;
}

export function registerSkillRoutes(api: Api, ctx: SkillRouteDeps): void {
  const { rpc } = ctx;
  const cache = createSharedCache(ctx.redis, ctx.config.redis.prefix);

  api.route<Record<string, never>, { encoded: string }>({
    method: 'get',
    path: '/v1/skill/:encoded',
    summary: 'Agent skill document for a checkout session',
    description: 'encoded: a hosted checkout session\'s id (cs_…, POST /v1/checkout/sessions: its terms, and a link to its page /checkout/{id}), or the checkout session as base64 or base64url JSON, with the compact keys of the checkout links '
      + '(tm token mint, r recipient, g gateway, a amount, pf payment frequency, ar auto renew, mr max renewals, tid tracking id, '
      + 'memo, su success URL, cu cancel URL) or the same names spelled out (tokenMint, recipient, ...). tm, r, g and a are required; '
      + 'pf defaults to Monthly, ar to true, mr to unlimited. The mint\'s decimals are read from the chain and the amount converted '
      + 'exactly ("1.5" with 6 decimals = 1500000). 400: bad encoding, missing or invalid field, more decimal places than the mint has; '
      + '404: the mint does not exist on the chain; 503: the chain is unreachable.',
    tags: ['skill'],
    params: {
      type: 'object',
      required: ['encoded'],
      properties: { encoded: { type: 'string', minLength: 1, maxLength: 4096, description: 'base64 or base64url JSON checkout session' } },
    },
    query: { type: 'object', additionalProperties: false, properties: {} },
    responses: {
      200: { description: 'the skill document', contentType: 'text/markdown; charset=utf-8', schema: { type: 'string' } },
      400: { description: 'bad session' },
      404: { description: 'unknown mint' },
      503: { description: 'chain unreachable' },
    },
    async handler({ params, req }) {
      const baseUrl = baseUrlOf(ctx, req);
      const hosted = HOSTED_SESSION_ID.test(params.encoded) ? await hostedSkillSession(ctx, cache, params.encoded, baseUrl) : undefined;
      let session;
      try {
        session = hosted?.session ?? parseSession(params.encoded);
      } catch (err) {
        if (err instanceof SessionError) throw invalid(`invalid checkout session: ${err.message}`);
        throw err;
      }
      const decimals = await mintDecimals(rpc, cache, session.tokenMint, ctx.config.solana.commitment);
      let units: bigint;
      try {
        units = toBaseUnits(session.amount, decimals);
      } catch (err) {
        if (err instanceof AmountError) throw invalid(err.message);
        throw err;
      }
      if (units > U64_MAX) throw invalid(`amount ${session.amount} exceeds the largest u64 amount for ${decimals} decimals`);
      // The symbol is cosmetic: the well-known map or a catalog answer already cached, never a new upstream call.
      const symbol = WELL_KNOWN[session.tokenMint]?.symbol ?? (await cache.get<AssetResolveData>(mintKey(session.tokenMint)))?.symbol;
      const body = renderSkill({
        session,
        decimals,
        baseUnits: units.toString(),
        symbol: symbol && /^[\w.$+-]{1,16}$/.test(symbol) ? symbol : null,
        network: ctx.config.solana.network,
        baseUrl,
        skillUrl: `${baseUrl}/v1/skill/${encodeURIComponent(params.encoded)}`,
        ...(hosted ? { hosted: hosted.link } : {}),
      });
      return { body, contentType: 'text/markdown; charset=utf-8' };
    },
  });
}
