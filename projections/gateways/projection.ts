/**
 * Gateways: one row per gateway account, PDA("gateway", authority). The signer starts as
 * the authority (as the program sets it at creation) until GatewaySignerChanged. A
 * deleted gateway keeps its row (active = false, deleted = true) so its history still
 * resolves; re-creating it under the same authority revives the same address.
 * Times are the events' block times; a missing block time leaves the previous value.
 */
import { sql } from 'kysely';
import { PROGRAM_ID } from '../../src/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/domain/pda.js';
import { int, pgText, text } from '../../src/domain/event-data.js';
import type { EventName } from '../../src/events/catalog.js';
import type { TributaryEvent } from '../../src/events/envelope.js';
import type { Projection, Trx } from '../runner/projection.js';

type Handler = (trx: Trx, pda: PdaDeriver, e: TributaryEvent) => Promise<unknown>;

const touch = (at: number | null) => ({ updated_at: sql<string>`coalesce(${at}::bigint, updated_at)` });
const byAddress = (trx: Trx, e: TributaryEvent) => trx.updateTable('gateways').where('address', '=', text(e.data, 'gateway'));

const HANDLERS: Partial<Record<EventName, Handler>> = {
  PaymentGatewayCreated: (trx, pda, e) => {
    const d = e.data;
    const authority = text(d, 'authority');
    const at = e.blockTime;
    const row = {
      address: pda.gateway(authority), authority, fee_recipient: text(d, 'fee_recipient'), signer: authority,
      fee_bps: int(d, 'gateway_fee_bps'), name: pgText(text(d, 'name')), url: pgText(text(d, 'url')), active: true, deleted: false,
      created_at: at, updated_at: at, deleted_at: null, created_slot: e.slot, created_signature: e.signature,
    };
    const { address: _a, ...rest } = row;
    return trx.insertInto('gateways').values(row).onConflict((oc) => oc.column('address').doUpdateSet(rest)).execute();
  },
  PaymentGatewayDeleted: (trx, _pda, e) =>
    byAddress(trx, e).set({ active: false, deleted: true, deleted_at: e.blockTime, ...touch(e.blockTime) }).execute(),
  GatewayFeeBpsChanged: (trx, _pda, e) =>
    byAddress(trx, e).set({ fee_bps: int(e.data, 'new_fee_bps'), ...touch(e.blockTime) }).execute(),
  GatewayFeeRecipientChanged: (trx, _pda, e) =>
    byAddress(trx, e).set({ fee_recipient: text(e.data, 'new_fee_recipient'), ...touch(e.blockTime) }).execute(),
  GatewaySignerChanged: (trx, _pda, e) =>
    byAddress(trx, e).set({ signer: text(e.data, 'new_signer'), ...touch(e.blockTime) }).execute(),
};

export function createGatewaysProjection(pda: PdaDeriver): Projection {
  return {
    name: 'gateways',
    tables: [{ name: 'gateways', orderBy: 'address' }],
    replayable: true,
    async apply(trx, events) {
      for (const e of events) await HANDLERS[e.name]?.(trx, pda, e);
    },
  };
}

export const gatewaysProjection = createGatewaysProjection(createPdaDeriver(PROGRAM_ID));
