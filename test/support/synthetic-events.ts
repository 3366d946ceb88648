/**
 * Minimal envelopes for tests of the spine itself (runner, replay, kill tests), where
 * the event bodies do not matter. Tests of decoding use anchor-events.ts instead.
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { eventId } from '../../src/kernel/events/envelope.js';

const key = (s: string) => bs58.encode(createHash('sha256').update(s).digest());
const sig = (s: string) => bs58.encode(Buffer.concat([createHash('sha512').update(s).digest()]));

export function syntheticEvents(n: number, seed: number, from = 0): TributaryEvent[] {
  const out: TributaryEvent[] = [];
  for (let i = from; i < from + n; i += 1) {
    const signature = sig(`${seed}:${i}`);
    out.push({
      id: eventId(signature, '0', 0),
      name: 'PaymentRecord',
      signature,
      slot: 1000 + i,
      blockTime: 1_700_000_000 + i,
      ixPath: '0',
      index: 0,
      data: {
        payment_policy: key(`policy:${seed}:${i % 50}`),
        gateway: key(`gateway:${seed}:${i % 5}`),
        amount: String(1000 + i),
        timestamp: String(1_700_000_000 + i),
        memo: `trk-${i % 20}`,
        record_id: i,
        payer: key(`payer:${i % 7}`),
        recipient: key(`rcpt:${i % 3}`),
        token_mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      },
    });
  }
  return out;
}
