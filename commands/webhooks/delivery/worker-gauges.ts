/**
 * A worker's debug-level gauges: every GAUGE_MS of wall clock, what held deliveries back
 * (peaks of busy slots, deliveries in flight and claimed ahead; the fast path's waits; the
 * record writes). The webhooks bench lines these up with its slow deliveries.
 */
import type { Logger } from '../../../infra/log/logger.js';
import type { FastPath } from './ready-pop.js';

/** The period of the gauges. */
const GAUGE_MS = 500;

/** The record writes of the current gauge period. */
export interface WriteTally { n: number; records: number; ms: number; maxMs: number }

export function createWriteTally(): { writes: WriteTally; note: (records: number, ms: number) => void } {
  const writes: WriteTally = { n: 0, records: 0, ms: 0, maxMs: 0 };
  const note = (records: number, ms: number) => {
    writes.n += 1;
    writes.records += records;
    writes.ms += ms;
    writes.maxMs = Math.max(writes.maxMs, ms);
  };
  return { writes, note };
}

export interface GaugeSources {
  busy: () => number;
  inflight: () => number;
  ahead: () => number;
  fastPath?: FastPath;
  writes: WriteTally;
}

/** Logs the gauges until `stop` aborts. */
export function startGauges(log: Logger, src: GaugeSources, stop: AbortSignal): void {
  const { writes, fastPath } = src;
  let gauges: NodeJS.Timeout | undefined;
  let last = fastPath?.counts();
  let peak = { busy: 0, inflight: 0, ahead: 0 };
  const sample = setInterval(() => {
    peak = { busy: Math.max(peak.busy, src.busy()), inflight: Math.max(peak.inflight, src.inflight()), ahead: Math.max(peak.ahead, src.ahead()) };
  }, 5);
  const report = () => {
    const c = fastPath?.counts();
    const d = c && last ? { pops: c.pops - last.pops, entries: c.entries - last.entries, roomWaitMs: Math.round(c.roomWaitMs - last.roomWaitMs), popMs: Math.round(c.popMs - last.popMs), prepMs: Math.round(c.prepMs - last.prepMs) } : undefined;
    last = c;
    log.debug({ gauges: { t: Math.floor(Date.now() / GAUGE_MS) * GAUGE_MS - GAUGE_MS, ...peak, fastPath: d, writes: { ...writes, ms: Math.round(writes.ms), maxMs: Math.round(writes.maxMs) } } }, 'webhook worker gauges');
    peak = { busy: 0, inflight: 0, ahead: 0 };
    Object.assign(writes, { n: 0, records: 0, ms: 0, maxMs: 0 });
  };
  const align = setTimeout(() => { report(); gauges = setInterval(report, GAUGE_MS); }, GAUGE_MS - (Date.now() % GAUGE_MS));
  gauges = align;
  stop.addEventListener('abort', () => { clearInterval(sample); clearTimeout(align); clearInterval(gauges); }, { once: true });
}
