/**
 * Gateways: one row per gateway account, PDA("gateway", authority). The signer starts as
 * the authority (as the program sets it at creation) until GatewaySignerChanged. A
 * deleted gateway keeps its row (active = false, deleted = true) so its history still
 * resolves; re-creating it under the same authority revives the same address.
 * Times are the events' block times; a missing block time leaves the previous value.
 */
import { sql } from 'kysely';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import { pgText } from '../../src/kernel/domain/event-data.js';
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { eventByEventProjection, type Projection, type Trx } from '../runner/projection.js';

const touch = (at: number | null) => ({ updated_at: sql<string>`coalesce(${at}::bigint, updated_at)` });
const byAddress = (trx: Trx, gateway: string) => trx.updateTable('gateways').where('address', '=', gateway);

async function applyOne(trx: Trx, pda: PdaDeriver, e: TributaryEvent): Promise<unknown> {
  switch (e.name) {
    case 'PaymentGatewayCreated': {
      const d = e.data;
      const at = e.blockTime;
      const row = {
        address: pda.gateway(d.authority), authority: d.authority, fee_recipient: d.fee_recipient, signer: d.authority,
        fee_bps: d.gateway_fee_bps, name: pgText(d.name), url: pgText(d.url), active: true, deleted: false,
        created_at: at, updated_at: at, deleted_at: null, created_slot: e.slot, created_signature: e.signature,
      };
      const { address: _a, ...rest } = row;
      return trx.insertInto('gateways').values(row).onConflict((oc) => oc.column('address').doUpdateSet(rest)).execute();
    }
    case 'PaymentGatewayDeleted':
      return byAddress(trx, e.data.gateway).set({ active: false, deleted: true, deleted_at: e.blockTime, ...touch(e.blockTime) }).execute();
    case 'GatewayFeeBpsChanged':
      return byAddress(trx, e.data.gateway).set({ fee_bps: e.data.new_fee_bps, ...touch(e.blockTime) }).execute();
    case 'GatewayFeeRecipientChanged':
      return byAddress(trx, e.data.gateway).set({ fee_recipient: e.data.new_fee_recipient, ...touch(e.blockTime) }).execute();
    case 'GatewaySignerChanged':
      return byAddress(trx, e.data.gateway).set({ signer: e.data.new_signer, ...touch(e.blockTime) }).execute();
    case 'ComposableExecuted': case 'ComposablePolicyCreated': case 'ComposablePolicyDeleted': case 'ComposablePolicyStatusChanged':
    case 'EmergencyPauseChanged': case 'PaymentPolicyCreated': case 'PaymentPolicyDeleted': case 'PaymentPolicyStatusChanged':
    case 'PaymentRecord': case 'ProgramAuthorityChanged': case 'ProgramConfigCreated': case 'ReferralRewardDistributedRecord':
    case 'UserPaymentCreated': case 'UserPaymentDeleted':
      return undefined;
    default:
      return assertNever(e);
  }
}

export function createGatewaysProjection(pda: PdaDeriver): Projection {
  return eventByEventProjection('gateways', { name: 'gateways', orderBy: 'address' }, (trx, e) => applyOne(trx, pda, e));
}

export const gatewaysProjection = createGatewaysProjection(createPdaDeriver(PROGRAM_ID));
