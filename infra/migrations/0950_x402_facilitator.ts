/**
 * The x402 facilitator (commands/x402/facilitator, commands/api-keys). Frozen.
 *
 * - gateway_api_keys: keys a gateway hands its merchants' servers to call the facilitator.
 *   Only the SHA-256 of the key is stored (the key is 32 random bytes: a slow hash buys
 *   nothing); `id` is the key's public prefix, so a lookup is by primary key.
 * - x402_resources: resources a merchant registered with their requirements; those marked
 *   discoverable are listed by GET /v1/x402/discovery/resources.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('gateway_api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('label', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await sql`CREATE INDEX gateway_api_keys_gateway_idx ON gateway_api_keys (gateway, created_at)`.execute(db);

  await db.schema
    .createTable('x402_resources')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('gateway', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('accepts', 'jsonb', (c) => c.notNull())
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('discoverable', 'boolean', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('x402_resources_resource_key', ['resource'])
    .execute();
  await sql`CREATE INDEX x402_resources_discoverable_idx ON x402_resources (type, id) WHERE discoverable`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('x402_resources').ifExists().execute();
  await db.schema.dropTable('gateway_api_keys').ifExists().execute();
}
