/**
 * User payments: one row per user payment account, PDA("user_payment", owner, mint).
 * Deletion closes the account on chain; the row stays with active = false, and a new
 * UserPaymentCreated for the same owner and mint revives it.
 */
import { sql } from 'kysely';
import { PROGRAM_ID } from '../../src/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/domain/pda.js';
import { text } from '../../src/domain/event-data.js';
import type { TributaryEvent } from '../../src/events/envelope.js';
import type { Projection, Trx } from '../runner/projection.js';

async function applyOne(trx: Trx, pda: PdaDeriver, e: TributaryEvent): Promise<void> {
  const d = e.data;
  const at = e.blockTime;
  if (e.name === 'UserPaymentCreated') {
    const owner = text(d, 'owner');
    const mint = text(d, 'token_mint');
    const row = {
      address: pda.userPayment(owner, mint), owner, token_mint: mint, token_account: text(d, 'token_account'), active: true,
      created_at: at, updated_at: at, deleted_at: null, created_slot: e.slot, created_signature: e.signature,
    };
    const { address: _a, ...rest } = row;
    await trx.insertInto('user_payments').values(row).onConflict((oc) => oc.column('address').doUpdateSet(rest)).execute();
  } else if (e.name === 'UserPaymentDeleted') {
    await trx.updateTable('user_payments')
      .set({ active: false, deleted_at: at, updated_at: sql<string>`coalesce(${at}::bigint, updated_at)` })
      .where('address', '=', text(d, 'user_payment')).execute();
  }
}

export function createUserPaymentsProjection(pda: PdaDeriver): Projection {
  return {
    name: 'user-payments',
    tables: [{ name: 'user_payments', orderBy: 'address' }],
    replayable: true,
    async apply(trx, events) {
      for (const e of events) await applyOne(trx, pda, e);
    },
  };
}

export const userPaymentsProjection = createUserPaymentsProjection(createPdaDeriver(PROGRAM_ID));
