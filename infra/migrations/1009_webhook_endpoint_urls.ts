/**
 * Webhook endpoint URLs kept as parsed (commands/webhooks/service.ts stores `new URL(raw).href`
 * since a NUL in a raw URL reached PostgreSQL and `…/` and `…/\t` counted as two endpoints).
 * Frozen. Rows created before are rewritten to their parsed form, so the duplicate check
 * compares like with like. A row whose parsed form another endpoint of the same gateway
 * already holds is left as it was: both were made on purpose and each has its own secret
 * and deliveries; neither is dropped. A row that does not parse stays as it is (deliveries
 * to it fail and are logged as they did). Nothing to undo: a parsed URL is a valid raw one.
 */
import type { Kysely } from 'kysely';

function parsed(raw: string): string | undefined {
  try {
    return new URL(raw).href;
  } catch {
    return undefined;
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const rows = await db.selectFrom('webhooks').select(['id', 'gateway_pubkey', 'endpoint_url']).orderBy('id').execute() as
    { id: number; gateway_pubkey: string; endpoint_url: string }[];
  const taken = new Set(rows.map((r) => `${r.gateway_pubkey} ${r.endpoint_url}`));
  for (const r of rows) {
    const href = parsed(r.endpoint_url);
    if (href === undefined || href === r.endpoint_url) continue;
    const key = `${r.gateway_pubkey} ${href}`;
    if (taken.has(key)) continue;
    await db.updateTable('webhooks').set({ endpoint_url: href }).where('id', '=', r.id).execute();
    taken.delete(`${r.gateway_pubkey} ${r.endpoint_url}`);
    taken.add(key);
  }
}

export async function down(): Promise<void> {
  // the parsed URLs stay: the earlier code accepts them as given
}
