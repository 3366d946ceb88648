/**
 * Resources a merchant registers with the facilitator: its URL, type, requirements and a
 * description of input and output. Registering answers the `accepts` entries (with their
 * ids) that the merchant serves in its 402 answers; those marked discoverable are listed
 * by GET /v1/x402/discovery/resources (the x402 v2 discovery shape). A URL belongs to the
 * gateway that registered it first: another gateway's registration of it is a 409.
 */
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import { conflict } from '../../../src/kernel/http/errors.js';
import { X402_VERSION, type AcceptedRequirement } from '../requirements.js';

export interface ResourceInput {
  resource: string;
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

export async function registerResource(db: Db, gateway: string, r: ResourceInput, accepts: AcceptedRequirement[], now: Date): Promise<DiscoveryItem> {
  const metadata = {
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(r.input !== undefined ? { input: r.input } : {}),
    ...(r.output !== undefined ? { output: r.output } : {}),
  };
  const row = await db.insertInto('x402_resources')
    .values({
      gateway, resource: r.resource, type: r.type, description: r.description ?? null, accepts: JSON.stringify(accepts),
      metadata: JSON.stringify(metadata), discoverable: r.discoverable, updated_at: now,
    })
    .onConflict((oc) => oc.column('resource').doUpdateSet({
      type: (eb) => eb.ref('excluded.type'), description: (eb) => eb.ref('excluded.description'), accepts: (eb) => eb.ref('excluded.accepts'),
      metadata: (eb) => eb.ref('excluded.metadata'), discoverable: (eb) => eb.ref('excluded.discoverable'), updated_at: (eb) => eb.ref('excluded.updated_at'),
    }).where('x402_resources.gateway', '=', gateway))
    .returning(['resource', 'type', 'accepts', 'metadata', 'updated_at'])
    .executeTakeFirst();
  if (!row) throw conflict(`resource ${r.resource} is registered by another gateway`);
  return item(row);
}

const item = (row: { resource: string; type: string; accepts: unknown[]; metadata: Record<string, unknown>; updated_at: Date }): DiscoveryItem => ({
  resource: row.resource, type: row.type, x402Version: X402_VERSION, accepts: row.accepts as AcceptedRequirement[],
  lastUpdated: row.updated_at.toISOString(), metadata: row.metadata,
});

export async function discoverResources(
  db: Db, f: { type?: string; limit: number; offset: number },
): Promise<{ items: DiscoveryItem[]; total: number }> {
  let q = db.selectFrom('x402_resources').where('discoverable', '=', true);
  if (f.type !== undefined) q = q.where('type', '=', f.type);
  const [rows, count] = await Promise.all([
    q.select(['resource', 'type', 'accepts', 'metadata', 'updated_at']).orderBy('id').limit(f.limit).offset(f.offset).execute(),
    q.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(item), total: Number(count.n) };
}
