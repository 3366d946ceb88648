/**
 * A payment row as one line of COPY's text format, rendered straight from its event: the
 * same fields, in PAYMENT_COLUMNS order, and the same stored answer (doc.ts) as the row
 * object the model builds for its other writes, without that object, its values array
 * and a COPY field conversion per column (the live and replay rates of this model were
 * bound by this process's time and garbage per row). Pure: a function of its arguments.
 *
 * COPY text: fields separated by a tab, the line ended by a newline, NULL as \N, a
 * backslash, newline, carriage return or tab inside a text escaped with a backslash,
 * bytea as \\x and hex (the backslash of bytea's hex form itself escaped).
 */
import { paymentAt, pgText } from '../../src/kernel/domain/event-data.js';
import { PAYMENT_MEMO_BYTES, memoFromData, memoToTrackingId } from '../../src/kernel/domain/memo.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { COPY_NULL as NULL, copyText } from '../../infra/postgres/copy.js';

export { copyText };

/** What a composable execution's row takes from its policy's creation. */
export interface PolicyMemo { memo: Buffer; tracking_id: string; input_mint: string | null }

const nullable = (s: string | null): string => (s === null ? NULL : copyText(s));
const json = (v: unknown): string => JSON.stringify(v);
const jsonText = (s: string | null): string => (s === null ? 'null' : JSON.stringify(s));

/** The envelope's part of the stored answer (doc.ts toExecution), up to its `data`. */
function docHead(e: TributaryEvent, kind: string): string {
  const blockTime = e.blockTime === null ? null : Number(e.blockTime);
  const ixPath = e.id.slice(e.signature.length + 1, e.id.lastIndexOf(':'));
  const timestamp = blockTime === null ? 'null' : json(new Date(blockTime * 1000).toISOString());
  return `{"id":${json(e.id)},"name":${json(kind)},"signature":${json(e.signature)},"slot":${json(Number(e.slot))},"blockTime":${json(blockTime)},"timestamp":${timestamp},"ixPath":${json(ixPath)},"index":${json(e.index)},"data":`;
}

/** The columns every execution has, from event_id to at (PAYMENT_COLUMNS' first ten). */
function head(e: TributaryEvent<'PaymentRecord' | 'ComposableExecuted'>, policy: string): string {
  const bt = e.blockTime === null ? NULL : String(e.blockTime);
  return `${copyText(e.id)}\t${e.name}\t${copyText(policy)}\t${copyText(e.data.gateway)}\t${copyText(e.signature)}\t${e.slot}\t${e.index}\t${bt}\t${BigInt(e.data.timestamp)}\t${paymentAt(e)}`;
}

/** What a payment's line takes from its memo: the bytes as hex, the trackingId as JSON and as a COPY field. */
interface MemoParts { hex: string; trackingJson: string; trackingField: string }

/**
 * Memos seen lately, by their text (or hex, when the codec kept the bytes): a policy's
 * payments carry its one memo again and again, and decoding it, its hex and its two
 * renderings cost about a microsecond a row. Cleared when full, as the codec's key cache.
 */
const MEMO_CACHE_LIMIT = 10_000;
const memoCache = new Map<string, MemoParts>();

function memoParts(d: { memo?: unknown; memo_hex?: unknown }): MemoParts {
  const key = typeof d.memo_hex === 'string' ? `x${d.memo_hex}` : typeof d.memo === 'string' ? `t${d.memo}` : '';
  const hit = memoCache.get(key);
  if (hit !== undefined) return hit;
  const memo = memoFromData(d, PAYMENT_MEMO_BYTES);
  const trackingId = pgText(memoToTrackingId(memo));
  const parts = { hex: memo.toString('hex'), trackingJson: json(trackingId), trackingField: copyText(trackingId) };
  if (memoCache.size >= MEMO_CACHE_LIMIT) memoCache.clear();
  memoCache.set(key, parts);
  return parts;
}

/**
 * Account keys as JSON, by key: a batch names a few policies, gateways, payers and
 * recipients again and again, and a lookup costs less than quoting one (five a row).
 * Cleared when full, as the memo cache.
 */
const KEY_CACHE_LIMIT = 50_000;
const keyJsonCache = new Map<string, string>();

function keyJson(key: string): string {
  let j = keyJsonCache.get(key);
  if (j === undefined) {
    j = json(key);
    if (keyJsonCache.size >= KEY_CACHE_LIMIT) keyJsonCache.clear();
    keyJsonCache.set(key, j);
  }
  return j;
}

/** A PaymentRecord's row: its memo is its own. */
export function paymentRecordLine(e: TributaryEvent<'PaymentRecord'>): string {
  const d = e.data;
  const memo = memoParts(d);
  const amount = BigInt(d.amount).toString();
  const timestamp = BigInt(d.timestamp).toString();
  const doc = `${docHead(e, e.name)}{"payment_policy":${keyJson(d.payment_policy)},"gateway":${keyJson(d.gateway)},"recipient":${keyJson(d.recipient)},"timestamp":${json(timestamp)},"record_id":${json(Number(d.record_id))},"amount":${json(amount)},"memo":${memo.trackingJson},"memo_hex":"${memo.hex}","payer":${keyJson(d.payer)},"token_mint":${keyJson(d.token_mint)}},"trackingId":${memo.trackingJson}}`;
  return `${head(e, d.payment_policy)}\t${amount}\t${NULL}\t${NULL}\t${NULL}\t${copyText(d.payer)}\t${copyText(d.recipient)}\t${copyText(d.token_mint)}\t${NULL}\t${d.record_id}\t\\\\x${memo.hex}\t${memo.trackingField}\t${copyText(doc)}\n`;
}

/** A ComposableExecuted's row, with its policy's memo as it stood at that point of the batch (none: not seen yet). */
export function composableLine(e: TributaryEvent<'ComposableExecuted'>, memo: PolicyMemo | undefined): string {
  const d = e.data;
  const input = BigInt(d.input_amount).toString();
  const output = BigInt(d.output_amount).toString();
  const gatewayFee = BigInt(d.gateway_fee).toString();
  const protocolFee = BigInt(d.protocol_fee).toString();
  const timestamp = BigInt(d.timestamp).toString();
  const trackingId = memo?.tracking_id ?? null;
  const doc = `${docHead(e, e.name)}{"composable_policy":${json(d.composable_policy)},"gateway":${json(d.gateway)},"recipient":${json(d.recipient)},"timestamp":${json(timestamp)},"record_id":${json(Number(d.record_id))},"target_program":${json(d.target_program)},"input_amount":${json(input)},"output_amount":${json(output)},"gateway_fee":${json(gatewayFee)},"protocol_fee":${json(protocolFee)}},"trackingId":${jsonText(trackingId)}}`;
  const memoField = memo === undefined ? NULL : `\\\\x${memo.memo.toString('hex')}`;
  return `${head(e, d.composable_policy)}\t${input}\t${output}\t${gatewayFee}\t${protocolFee}\t${NULL}\t${copyText(d.recipient)}\t${nullable(memo?.input_mint ?? null)}\t${copyText(d.target_program)}\t${d.record_id}\t${memoField}\t${nullable(trackingId)}\t${copyText(doc)}\n`;
}
