/**
 * The merchant's view: per gateway and mint, subscribers (one row per payer wallet) and
 * revenue buckets (day, week, month UTC) with gross, gateway fee, protocol fee and net
 * as exact numerics, payment counts, new and ended subscriptions, and MRR at each
 * bucket's end; fee settings followed through each gateway's events (fold.ts).
 * Its tables are its own: it remembers user payments and policies itself rather than
 * reading another model, so a replay of this one model alone rebuilds it.
 */
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { Projection } from '../runner/projection.js';
import { foldMerchant } from './fold.js';
import { batchNeeds } from './needs.js';
import { loadState, saveState } from './store.js';

import { MERCHANT_PROJECTION } from '../../src/kernel/names/index.js';

export { MERCHANT_PROJECTION };

export function createMerchantProjection(pda: PdaDeriver): Projection {
  return {
    name: MERCHANT_PROJECTION,
    tables: [
      { name: 'merchant_program', orderBy: 'id' },
      { name: 'merchant_gateways', orderBy: 'gateway' },
      { name: 'merchant_user_payments', orderBy: 'user_payment' },
      { name: 'merchant_policies', orderBy: 'address' },
      { name: 'merchant_subscribers', orderBy: 'gateway, payer, token_mint' },
      { name: 'merchant_mrr', orderBy: 'gateway, token_mint' },
      { name: 'merchant_revenue', orderBy: 'gateway, bucket, token_mint, bucket_start' },
    ],
    replayable: true,
    async apply(trx, events) {
      const needs = batchNeeds(pda, events);
      const state = await loadState(trx, needs);
      const out = foldMerchant(pda, state, events);
      await saveState(trx, state, out);
    },
  };
}

export const merchantProjection = createMerchantProjection(createPdaDeriver(PROGRAM_ID));
