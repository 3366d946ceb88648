/**
 * Executions of a policy, newest first: PaymentRecord events of a payment policy,
 * ComposableExecuted events of a composable policy, read from the payments model and
 * shaped as the events API shapes events (queries/events/event-schema.ts), plus the
 * policy's trackingId. Order: slot, then record id (the policy's payment count), both
 * descending, so pages are stable.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { PaymentsTable } from '../../projections/payments/tables.js';
import type { EventData } from '../../src/events/codec.js';
import type { PolicyKind } from '../../src/domain/policy.js';
import { typedEventSchema } from '../events/event-schema.js';
import type { JsonSchema } from '../../src/http/schema.js';
import type { Page } from './policy-rows.js';

type PaymentRow = Selectable<PaymentsTable>;

export interface Execution {
  id: string;
  name: 'PaymentRecord' | 'ComposableExecuted';
  signature: string;
  slot: number;
  blockTime: number | null;
  timestamp: string | null;
  ixPath: string;
  index: number;
  data: EventData;
  trackingId: string | null;
}

const EVENT = { payment: 'PaymentRecord', composable: 'ComposableExecuted' } as const;

function data(r: PaymentRow): EventData {
  const common = { gateway: r.gateway, recipient: r.recipient, timestamp: r.timestamp, record_id: Number(r.record_id) };
  if (r.kind === 'PaymentRecord') {
    const memo = r.memo ?? Buffer.alloc(64);
    return {
      payment_policy: r.policy, ...common, amount: r.amount, memo: r.tracking_id ?? '', memo_hex: memo.toString('hex'),
      payer: r.payer ?? '', token_mint: r.token_mint ?? '',
    };
  }
  return {
    composable_policy: r.policy, ...common, target_program: r.target_program ?? '', input_amount: r.amount,
    output_amount: r.output_amount ?? '0', gateway_fee: r.gateway_fee ?? '0', protocol_fee: r.protocol_fee ?? '0',
  };
}

export function toExecution(r: PaymentRow): Execution {
  const blockTime = r.block_time === null ? null : Number(r.block_time);
  // the event id is <signature>:<instruction path>:<index>
  const ixPath = r.event_id.slice(r.signature.length + 1, r.event_id.lastIndexOf(':'));
  return {
    id: r.event_id,
    name: r.kind as Execution['name'],
    signature: r.signature,
    slot: Number(r.slot),
    blockTime,
    timestamp: blockTime === null ? null : new Date(blockTime * 1000).toISOString(),
    ixPath,
    index: r.event_index,
    data: data(r),
    trackingId: r.tracking_id,
  };
}

export async function listExecutions(db: Db, kind: PolicyKind, policy: string, page: Page): Promise<Execution[]> {
  const rows = await db.selectFrom('payments').selectAll()
    .where('policy', '=', policy).where('kind', '=', EVENT[kind])
    .orderBy('slot', 'desc').orderBy('record_id', 'desc').orderBy('event_id', 'desc')
    .limit(page.limit).offset(page.offset).execute();
  return rows.map(toExecution);
}

export function executionSchema(kind: PolicyKind): JsonSchema {
  const base = typedEventSchema(EVENT[kind]);
  return {
    ...base,
    properties: {
      ...(base['properties'] as Record<string, JsonSchema>),
      trackingId: { type: 'string', nullable: true, description: 'the policy\'s memo as UTF-8 (its tracking id)' },
    },
  };
}
