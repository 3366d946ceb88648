/**
 * Resources a merchant registers with the facilitator: its URL, type, requirements and a
 * description of input and output. Registering answers the `accepts` entries (with their
 * ids) that the merchant serves in its 402 answers, whether or not the resource is listed.
 * Discovery (GET /v1/x402/discovery/resources, the x402 v2 shape) lists a resource only
 * once its gateway proved control of the URL's origin (origin-proofs.ts): a URL belongs to
 * no one for having been named first. Each gateway's registration of a URL is its own row;
 * the listed one is the proven gateway's. An unproven registration never blocks a proven
 * one; two gateways that both proved the origin (its owner published both tokens) cannot
 * both list one URL: the second is a 409.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { conflict } from '../../../src/kernel/http/errors.js';
import { X402_VERSION, type AcceptedRequirement } from '../requirements.js';
import { ensureProof, listProven, proofInstructions, type ProofInstructions } from './origin-proofs.js';

export interface ResourceInput {
  /** normalized (resource-url.ts) */
  resource: string;
  origin: string;
  type: string;
  description?: string;
  discoverable: boolean;
  input?: unknown;
  output?: unknown;
}

export interface DiscoveryItem {
  resource: string;
  type: string;
  x402Version: number;
  accepts: AcceptedRequirement[];
  lastUpdated: string;
  metadata: Record<string, unknown>;
}

/** The registration's answer: the item, and whether discovery lists it (if not: what to publish). */
export type RegisteredResource = DiscoveryItem & { verified: boolean; listed: boolean; proof?: ProofInstructions };

const heldByProven = (resource: string) => conflict(`resource ${resource} is listed by another gateway that proved control of its origin`);

const isUniqueViolation = (err: unknown): boolean => (err as { code?: string }).code === '23505';

export async function registerResource(
  db: Db, gateway: string, r: ResourceInput, accepts: AcceptedRequirement[], now: Date,
): Promise<RegisteredResource> {
  const metadata = {
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(r.input !== undefined ? { input: r.input } : {}),
    ...(r.output !== undefined ? { output: r.output } : {}),
  };
  try {
    return await db.transaction().execute(async (trx) => {
      const proof = await ensureProof(trx, gateway, r.origin, now);
      const row = await trx.insertInto('x402_resources')
        .values({
          gateway, resource: r.resource, origin: r.origin, type: r.type, description: r.description ?? null, accepts: JSON.stringify(accepts),
          metadata: JSON.stringify(metadata), discoverable: r.discoverable, updated_at: now,
        })
        .onConflict((oc) => oc.columns(['gateway', 'resource']).doUpdateSet({
          type: (eb) => eb.ref('excluded.type'), description: (eb) => eb.ref('excluded.description'), accepts: (eb) => eb.ref('excluded.accepts'),
          metadata: (eb) => eb.ref('excluded.metadata'), discoverable: (eb) => eb.ref('excluded.discoverable'), updated_at: (eb) => eb.ref('excluded.updated_at'),
        }))
        .returning(['resource', 'type', 'accepts', 'metadata', 'updated_at', 'listed'])
        .executeTakeFirstOrThrow();
      const verified = proof.verified_at !== null;
      let listed = row.listed;
      if (verified && !listed) {
        listed = (await listProven(trx, gateway, { resource: r.resource })).length > 0;
        if (!listed) throw heldByProven(r.resource);
      }
      return { ...item(row), verified, listed, ...(verified ? {} : { proof: proofInstructions(r.origin, proof.token) }) };
    });
  } catch (err) {
    // two proven gateways listing one URL at once: the partial unique index lets one win
    if (isUniqueViolation(err)) throw heldByProven(r.resource);
    throw err;
  }
}

const item = (row: { resource: string; type: string; accepts: unknown[]; metadata: Record<string, unknown>; updated_at: Date }): DiscoveryItem => ({
  resource: row.resource, type: row.type, x402Version: X402_VERSION, accepts: row.accepts as AcceptedRequirement[],
  lastUpdated: row.updated_at.toISOString(), metadata: row.metadata,
});

export async function discoverResources(
  db: Db, f: { type?: string; limit: number; offset: number },
): Promise<{ items: DiscoveryItem[]; total: number }> {
  let q = db.selectFrom('x402_resources').where('discoverable', '=', true).where('listed', '=', true);
  if (f.type !== undefined) q = q.where('type', '=', f.type);
  const [rows, count] = await Promise.all([
    q.select(['resource', 'type', 'accepts', 'metadata', 'updated_at']).orderBy('id').limit(f.limit).offset(f.offset).execute(),
    q.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(item), total: Number(count.n) };
}
