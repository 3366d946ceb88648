/**
 * When a bench's slow requests happen: latencies bucketed by the time their work was
 * offered (BUCKET_MS of wall clock), beside how late each process's event loop ran and how
 * long its garbage collector paused it in that bucket (./loop-probe.cjs in child
 * processes, `startLoopMonitor` in the bench's own).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { percentile } from './harness.js';

export const BUCKET_MS = 500;
const TICK_MS = 5;
const bucketOf = (t: number): number => Math.floor(t / BUCKET_MS) * BUCKET_MS;

/** One process's stalls in one bucket: the worst timer delay and the GC pauses (ms). */
export interface LoopSample { t: number; lag: number; gc: number; gcMax: number; cpu: number }

export interface LoopMonitor { samples(): LoopSample[]; stop(): void }

/** ./loop-probe.cjs for this process, kept in memory. */
export function startLoopMonitor(): LoopMonitor {
  const out = new Map<number, LoopSample>();
  const at = (t: number) => {
    const b = bucketOf(t);
    let s = out.get(b);
    if (!s) { s = { t: b, lag: 0, gc: 0, gcMax: 0, cpu: 0 }; out.set(b, s); }
    return s;
  };
  let expected = Date.now() + TICK_MS;
  let cpuAt = process.cpuUsage();
  const timer = setInterval(() => {
    const now = Date.now();
    const s = at(now);
    const used = process.cpuUsage(cpuAt);
    cpuAt = process.cpuUsage();
    s.cpu += Math.round((used.user + used.system) / 1000);
    s.lag = Math.max(s.lag, now - expected);
    expected = now + TICK_MS;
  }, TICK_MS);
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const s = at(Date.now());
      s.gc += e.duration;
      s.gcMax = Math.max(s.gcMax, e.duration);
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    samples: () => [...out.values()].map((s) => ({ ...s, gc: Math.round(s.gc), gcMax: Math.round(s.gcMax) })),
    stop() { clearInterval(timer); obs.disconnect(); },
  };
}

/** The probe lines in a child process's output, by process. */
export function probeSamples(output: string): Map<number, LoopSample[]> {
  const by = new Map<number, LoopSample[]>();
  for (const line of output.split('\n')) {
    const i = line.indexOf('LOOPPROBE ');
    if (i < 0) continue;
    try {
      const s = JSON.parse(line.slice(i + 10)) as LoopSample & { pid: number };
      by.set(s.pid, [...(by.get(s.pid) ?? []), s]);
    } catch { /* a line cut by another writer */ }
  }
  return by;
}

/** A latency and when its work was offered (ms since the epoch). */
export interface Timed { at: number; ms: number }

/**
 * One line per bucket from `from` to the last offered: count, p50/p99/max, and for each
 * named process the worst loop delay and the GC pause total (lag/gc ms).
 */
export function printProfile(title: string, from: number, items: readonly Timed[], loops: ReadonlyMap<string, readonly LoopSample[]>, extra?: (bucket: number) => string): void {
  const buckets = new Map<number, number[]>();
  for (const it of items) {
    const b = bucketOf(it.at);
    const list = buckets.get(b);
    if (list) list.push(it.ms); else buckets.set(b, [it.ms]);
  }
  const keys = [...buckets.keys()].sort((a, b) => a - b);
  if (keys.length === 0) return;
  const last = keys[keys.length - 1]!;
  const names = [...loops.keys()];
  const loopAt = new Map([...loops].map(([n, ss]) => [n, new Map(ss.map((s) => [s.t, s]))]));
  process.stdout.write(`    ${title} (by ${BUCKET_MS} ms of offer time; loop columns: worst timer delay/GC/CPU ms in that bucket)\n`);
  process.stdout.write(`      ${'t ms'.padStart(6)} ${'n'.padStart(5)} ${'p50'.padStart(5)} ${'p99'.padStart(5)} ${'max'.padStart(5)}  ${names.map((n) => n.padStart(12)).join(' ')}${extra ? '  extra' : ''}\n`);
  for (let b = bucketOf(from); b <= last; b += BUCKET_MS) {
    const ms = (buckets.get(b) ?? []).sort((x, y) => x - y);
    const cols = names.map((n) => {
      const s = loopAt.get(n)?.get(b);
      return (s ? `${s.lag}/${s.gc}/${s.cpu}` : '-').padStart(12);
    }).join(' ');
    const p = (q: number) => String(ms.length > 0 ? percentile(ms, q) : '-').padStart(5);
    process.stdout.write(`      ${String(b - bucketOf(from)).padStart(6)} ${String(ms.length).padStart(5)} ${p(50)} ${p(99)} ${String(ms.length > 0 ? ms[ms.length - 1] : '-').padStart(5)}  ${cols}${extra ? `  ${extra(b)}` : ''}\n`);
  }
}
