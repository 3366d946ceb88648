/**
 * Discovery by proof of control (commands/x402/facilitator/origin-proofs.ts). Frozen.
 *
 * - x402_origin_proofs: one token per (gateway, origin), issued when the gateway first
 *   registers a resource on the origin; `verified_at` is set once the service found the
 *   token in the origin's /.well-known/tributary-x402.txt. The token is published by
 *   design, so it is kept as is (it proves nothing until the origin serves it).
 * - x402_resources: a URL is no longer locked by the first gateway that names it. Rows are
 *   unique per (gateway, resource); `listed` marks the one row per URL that discovery
 *   shows, that of a gateway whose proof of the origin is verified (a partial unique index
 *   keeps it one). `origin` is the normalized URL's origin. Rows registered before this
 *   migration are normalized where the URL allows it and start unlisted: their gateways
 *   prove their origins like everyone else.
 */
import { sql, type Kysely } from 'kysely';

/** The URL as the service now stores it (the service's normalization, frozen here in its simplest form). */
function normalized(raw: string): { resource: string; origin: string } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.search === '') url.search = '';
  return { resource: url.href, origin: url.origin };
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('x402_origin_proofs')
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('verified_at', 'timestamptz')
    .addPrimaryKeyConstraint('x402_origin_proofs_pkey', ['gateway', 'origin'])
    .execute();

  await db.schema.alterTable('x402_resources').addColumn('origin', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('x402_resources').addColumn('listed', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.alterTable('x402_resources').dropConstraint('x402_resources_resource_key').execute();

  const rows = await db.selectFrom('x402_resources').select(['id', 'gateway', 'resource']).orderBy('id').execute() as { id: string; gateway: string; resource: string }[];
  const seen = new Set<string>();
  for (const row of rows) {
    const n = normalized(row.resource);
    const key = `${row.gateway} ${n?.resource ?? row.resource}`;
    // two spellings of one URL by one gateway: the first registration stays
    if (seen.has(key)) { await db.deleteFrom('x402_resources').where('id', '=', row.id).execute(); continue; }
    seen.add(key);
    if (n) await db.updateTable('x402_resources').set({ resource: n.resource, origin: n.origin }).where('id', '=', row.id).execute();
  }

  await db.schema.alterTable('x402_resources').addUniqueConstraint('x402_resources_gateway_resource_key', ['gateway', 'resource']).execute();
  await sql`CREATE UNIQUE INDEX x402_resources_listed_key ON x402_resources (resource) WHERE listed`.execute(db);
  await sql`CREATE INDEX x402_resources_origin_idx ON x402_resources (gateway, origin)`.execute(db);
  await sql`DROP INDEX x402_resources_discoverable_idx`.execute(db);
  await sql`CREATE INDEX x402_resources_discoverable_idx ON x402_resources (type, id) WHERE discoverable AND listed`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX x402_resources_discoverable_idx`.execute(db);
  await sql`CREATE INDEX x402_resources_discoverable_idx ON x402_resources (type, id) WHERE discoverable`.execute(db);
  await sql`DROP INDEX x402_resources_origin_idx`.execute(db);
  await sql`DROP INDEX x402_resources_listed_key`.execute(db);
  await db.schema.alterTable('x402_resources').dropConstraint('x402_resources_gateway_resource_key').execute();
  // a URL registered by several gateways keeps its listed row, else its oldest
  await sql`DELETE FROM x402_resources r USING x402_resources o
    WHERE o.resource = r.resource AND o.id <> r.id AND (o.listed, -o.id) > (r.listed, -r.id)`.execute(db);
  await db.schema.alterTable('x402_resources').addUniqueConstraint('x402_resources_resource_key', ['resource']).execute();
  await db.schema.alterTable('x402_resources').dropColumn('listed').execute();
  await db.schema.alterTable('x402_resources').dropColumn('origin').execute();
  await db.schema.dropTable('x402_origin_proofs').ifExists().execute();
}
