/**
 * A stream of events for spine-level tests: Anchor-encoded events of every kind when the
 * generator exists, else synthetic payments.
 */
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { syntheticEvents } from './synthetic-events.js';

export function testEventStream(n: number, seed: number): TributaryEvent[] {
  return syntheticEvents(n, seed);
}
