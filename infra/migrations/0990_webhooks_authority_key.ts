/**
 * Webhooks registered under a gateway account address, before such a gateway_pubkey was
 * refused (SPEC: the gateway's authority key), move to the authority the gateways read
 * model knows for that account, so they are listed and deleted under it. A row whose
 * authority already has a webhook for the same endpoint_url stays as it is (the unique
 * key would refuse the move); so does one whose gateway the read model does not know.
 * Their deliveries are unchanged: delivery matches both keys. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    UPDATE webhooks w
    SET gateway_pubkey = g.authority, gateway_account = g.address
    FROM gateways g
    WHERE g.address = w.gateway_pubkey
      AND NOT EXISTS (SELECT 1 FROM webhooks o WHERE o.gateway_pubkey = g.authority AND o.endpoint_url = w.endpoint_url)
  `.execute(db);
}

export async function down(): Promise<void> {
  // the account a row was registered under is not kept: nothing to undo
}
