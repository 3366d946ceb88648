/**
 * Proof that a gateway controls an origin, before discovery lists its resources there.
 * The first registration of a resource on an origin issues the gateway a token (random,
 * bound to the gateway and the origin). The gateway publishes it in the origin's
 * TOKEN_FILE, one token per line (several gateways may serve one origin), and asks for a
 * check (POST /v1/x402/resources/verify). The service fetches the file itself, behind the
 * SSRF guard, without following redirects, and marks the origin verified for that gateway:
 * its resources on the origin are listed. A failed check changes nothing and says why.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { invalid, notFound } from '../../../src/kernel/http/errors.js';
import type { FetchOutcome, OriginFetcher } from './origin-fetch.js';

/** Where the token is published, under the origin. */
export const TOKEN_FILE = '/.well-known/tributary-x402.txt';

export interface ProofInstructions { origin: string; url: string; token: string; instructions: string }

export interface Proof { token: string; verified_at: Date | null }

export const proofInstructions = (origin: string, token: string): ProofInstructions => ({
  origin, url: `${origin}${TOKEN_FILE}`, token,
  instructions: `Serve ${origin}${TOKEN_FILE} (status 200, text/plain, no redirect) with this token on a line of its own, then POST /v1/x402/resources/verify {"origin": "${origin}"}. Until then the resource is registered but not listed in discovery.`,
});

/** The gateway's token for the origin, issued on first use. */
export async function ensureProof(db: Db, gateway: string, origin: string, now: Date): Promise<Proof> {
  await db.insertInto('x402_origin_proofs')
    .values({ gateway, origin, token: `tributary-x402-${randomBytes(24).toString('base64url')}`, created_at: now })
    .onConflict((oc) => oc.columns(['gateway', 'origin']).doNothing())
    .execute();
  return db.selectFrom('x402_origin_proofs').select(['token', 'verified_at']).where('gateway', '=', gateway).where('origin', '=', origin).executeTakeFirstOrThrow();
}

/**
 * Lists the gateway's rows (one URL, or every URL of an origin) that no other gateway
 * lists; answers the URLs now listed. Called once the gateway's proof of the origin holds.
 */
export async function listProven(db: Db, gateway: string, which: { resource: string } | { origin: string }): Promise<string[]> {
  const rows = await db.updateTable('x402_resources as r')
    .set({ listed: true })
    .where('r.gateway', '=', gateway)
    .where((eb) => ('resource' in which ? eb('r.resource', '=', which.resource) : eb('r.origin', '=', which.origin)))
    .where((eb) => eb.not(eb.exists(
      eb.selectFrom('x402_resources as o').select(sql`1`.as('one'))
        .whereRef('o.resource', '=', 'r.resource').where('o.listed', '=', true).where('o.gateway', '<>', gateway),
    )))
    .returning('r.resource')
    .execute();
  return rows.map((x) => x.resource);
}

export interface VerifiedOrigin { origin: string; verified: true; verifiedAt: string; listed: string[] }

/** The reason in parentheses is one of a fixed few (the route's description lists them), for programs to match. */
const failed = (origin: string, reason: string, why: string) =>
  invalid(`control of ${origin} not proven (${reason}): ${origin}${TOKEN_FILE}: ${why}`, { reason });

function refusal(origin: string, outcome: Exclude<FetchOutcome, { kind: 'ok' }>): Error {
  switch (outcome.kind) {
    case 'refused_target': return failed(origin, 'refused_target', outcome.message);
    case 'unreachable': return failed(origin, 'unreachable', 'no answer (unreachable, refused or timed out)');
    case 'redirect': return failed(origin, 'redirect', `it answered a redirect (${outcome.status}); redirects are not followed`);
    case 'status': return failed(origin, 'status', `it answered ${outcome.status}, not 200`);
    case 'too_large': return failed(origin, 'too_large', `it is larger than ${outcome.maxBytes} bytes`);
    default: {
      const never: never = outcome;
      return never;
    }
  }
}

/** Fetches the origin's token file; on the gateway's token, marks the origin verified and lists the gateway's resources there. */
export async function verifyOrigin(db: Db, fetcher: OriginFetcher, gateway: string, origin: string, now: Date): Promise<VerifiedOrigin> {
  const proof = await db.selectFrom('x402_origin_proofs').select(['token']).where('gateway', '=', gateway).where('origin', '=', origin).executeTakeFirst();
  if (!proof) throw notFound(`no token was issued for ${origin}: register a resource on it first (PUT /v1/x402/resources)`);
  const outcome = await fetcher.getText(`${origin}${TOKEN_FILE}`);
  if (outcome.kind !== 'ok') throw refusal(origin, outcome);
  if (!outcome.text.split('\n').some((line) => line.trim() === proof.token)) throw failed(origin, 'token_missing', 'the gateway\'s token is not on a line of it');
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('x402_origin_proofs').set({ verified_at: now }).where('gateway', '=', gateway).where('origin', '=', origin).execute();
    const listed = await listProven(trx, gateway, { origin });
    return { origin, verified: true as const, verifiedAt: now.toISOString(), listed };
  });
}
