/**
 * Every migration, in order, listed statically so a build needs no file-system scan.
 * Migrations take Kysely<any> and import nothing of the application: frozen in time.
 * Add new ones at the end with the next number; never edit one that has shipped.
 */
import { Migrator, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import * as m0001 from './0001_spine.js';
import * as m0100 from './0100_read_models.js';
import * as m0200 from './0200_signing_keys.js';
import * as m0300 from './0300_pools.js';
import * as m0400 from './0400_webhooks.js';
import * as m0600 from './0600_scheduler.js';
import * as m0700 from './0700_webhook_endpoints.js';
import * as m0800 from './0800_merchant.js';
import * as m0950 from './0950_x402_facilitator.js';
import * as m0960 from './0960_x402_prepaid.js';
import * as m0990 from './0990_webhooks_authority_key.js';
import * as m0991 from './0991_webhook_claim_function.js';
import * as m0992 from './0992_merchant_subscribers_past_due.js';
import * as m0993 from './0993_payg_usage_unbillable_index.js';
import * as m0994 from './0994_webhook_events.js';
import * as m0995 from './0995_api_keys_created_by.js';
import * as m0997 from './0997_scheduler_counts.js';
import * as m0998 from './0998_payg_usage_user_payment.js';
import * as m0999 from './0999_projection_dedup_partitions.js';
import * as m0998r from './0998_payg_usage_reserved.js';
import * as m0998h from './0998_payg_usage_reserved_hot.js';
import * as m0996 from './0996_webhook_fanouts.js';
import * as m1000 from './1000_events_drop_name_time_index.js';
import * as m1001 from './1001_events_keyed_data_index.js';
import * as m1002 from './1002_payments_unfilled_index.js';
import * as m1003s from './1003_scheduler_intents_by_payment.js';
import * as m1004m from './1004_meter_slices.js';
import * as m1005x from './1005_x402_exact.js';
import * as m1006s from './1006_x402_exact_served.js';
import * as m1007c from './1007_checkout_sessions.js';
import * as m1008x from './1008_x402_origin_proofs.js';
import * as m1009w from './1009_webhook_endpoint_urls.js';
import * as m1010m from './1010_meter_slices_btree.js';
import * as m1011m from './1011_meter_slices_statement.js';
import * as m1012m from './1012_payg_usage_served_hot.js';
import * as m1013m from './1013_meter_slices_by_counter.js';
import * as m1014p from './1014_payg_served_marks.js';
import * as m1015p from './1015_payg_account_owed.js';
import * as m1016s from './1016_x402_siwx_nonces.js';
import * as m1017p from './1017_payg_charges_basis.js';
import * as m1018p from './1018_prepaid_credit_payments.js';
import * as m1019p from './1019_prepaid_credits_by_payer.js';
import * as m1020x from './1020_x402_spent_proofs.js';
import * as m1021g from './1021_gateway_session_floors.js';
import * as m1022p from './1022_prepaid_usage_reserved.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_spine': m0001,
  '0100_read_models': m0100,
  '0200_signing_keys': m0200,
  '0300_pools': m0300,
  '0400_webhooks': m0400,
  '0600_scheduler': m0600,
  '0700_webhook_endpoints': m0700,
  '0800_merchant': m0800,
  '0950_x402_facilitator': m0950,
  '0960_x402_prepaid': m0960,
  '0990_webhooks_authority_key': m0990,
  '0991_webhook_claim_function': m0991,
  '0992_merchant_subscribers_past_due': m0992,
  '0993_payg_usage_unbillable_index': m0993,
  '0994_webhook_events': m0994,
  '0995_api_keys_created_by': m0995,
  '0997_scheduler_counts': m0997,
  '0998_payg_usage_user_payment': m0998,
  '0999_projection_dedup_partitions': m0999,
  '0998_payg_usage_reserved': m0998r,
  '0998_payg_usage_reserved_hot': m0998h,
  '0996_webhook_fanouts': m0996,
  '1000_events_drop_name_time_index': m1000,
  '1001_events_keyed_data_index': m1001,
  '1002_payments_unfilled_index': m1002,
  '1003_scheduler_intents_by_payment': m1003s,
  '1004_meter_slices': m1004m,
  '1005_x402_exact': m1005x,
  '1006_x402_exact_served': m1006s,
  '1007_checkout_sessions': m1007c,
  '1008_x402_origin_proofs': m1008x,
  '1009_webhook_endpoint_urls': m1009w,
  '1010_meter_slices_btree': m1010m,
  '1011_meter_slices_statement': m1011m,
  '1012_payg_usage_served_hot': m1012m,
  '1013_meter_slices_by_counter': m1013m,
  '1014_payg_served_marks': m1014p,
  '1015_payg_account_owed': m1015p,
  '1016_x402_siwx_nonces': m1016s,
  '1017_payg_charges_basis': m1017p,
  '1018_prepaid_credit_payments': m1018p,
  '1019_prepaid_credits_by_payer': m1019p,
  '1020_x402_spent_proofs': m1020x,
  '1021_gateway_session_floors': m1021g,
  '1022_prepaid_usage_reserved': m1022p,
};

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  // Areas numbered their migrations in separate ranges while developed side by side; a
  // database may have applied a later range first, so order is by name but not enforced.
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, allowUnorderedMigrations: true });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error(`migration failed: ${JSON.stringify(result.error)}`);
  return result;
}
