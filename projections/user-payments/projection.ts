/**
 * User payments: one row per user payment account, PDA("user_payment", owner, mint).
 * Deletion closes the account on chain; the row stays with active = false, and a new
 * UserPaymentCreated for the same owner and mint revives it.
 */
import { sql } from 'kysely';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import { assertNever, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { eventByEventProjection, type Projection, type Trx } from '../runner/projection.js';

async function applyOne(trx: Trx, pda: PdaDeriver, e: TributaryEvent): Promise<void> {
  const at = e.blockTime;
  switch (e.name) {
    case 'UserPaymentCreated': {
      const { owner, token_mint: mint, token_account } = e.data;
      const row = {
        address: pda.userPayment(owner, mint), owner, token_mint: mint, token_account, active: true,
        created_at: at, updated_at: at, deleted_at: null, created_slot: e.slot, created_signature: e.signature,
      };
      const { address: _a, ...rest } = row;
      await trx.insertInto('user_payments').values(row).onConflict((oc) => oc.column('address').doUpdateSet(rest)).execute();
      return;
    }
    case 'UserPaymentDeleted':
      await trx.updateTable('user_payments')
        .set({ active: false, deleted_at: at, updated_at: sql<string>`coalesce(${at}::bigint, updated_at)` })
        .where('address', '=', e.data.user_payment).execute();
      return;
    case 'ComposableExecuted': case 'ComposablePolicyCreated': case 'ComposablePolicyDeleted': case 'ComposablePolicyStatusChanged':
    case 'EmergencyPauseChanged': case 'GatewayFeeBpsChanged': case 'GatewayFeeRecipientChanged': case 'GatewaySignerChanged':
    case 'PaymentGatewayCreated': case 'PaymentGatewayDeleted': case 'PaymentPolicyCreated': case 'PaymentPolicyDeleted':
    case 'PaymentPolicyStatusChanged': case 'PaymentRecord': case 'ProgramAuthorityChanged': case 'ProgramConfigCreated':
    case 'ReferralRewardDistributedRecord':
      return;
    default:
      assertNever(e);
  }
}

export function createUserPaymentsProjection(pda: PdaDeriver): Projection {
  return eventByEventProjection('user-payments', { name: 'user_payments', orderBy: 'address' }, (trx, e) => applyOne(trx, pda, e));
}

export const userPaymentsProjection = createUserPaymentsProjection(createPdaDeriver(PROGRAM_ID));
