/** The soak's closing report: the figures, the error rate during each fault, the checks. */
import type { WindowStats } from './load.js';
import type { Check } from './checks.js';

export interface SoakReport {
  settings: { seconds: number; rate: number; clients: number; perClient: number; readConnections: number; readRate: number };
  ledger: number;
  achieved: number;
  ingested: number;
  reads: { requests: number; seconds: number; rps: number; p50Ms: number; p99Ms: number; errors: number };
  windows: { name: string; from: number; recovered: number; to: number; stats: WindowStats }[];
  sockets: { connects: number; reconnects: number; payments: number; duplicates: number; subscribeErrors: number; incompleteCatchUps: number; errors: Record<string, number> };
  connectedAtEnd: number;
  drainSeconds: number;
  replicaLag: number | undefined;
  replicaLagMax: number;
  replicaLagP50: number;
  checks: Check[];
  totalSeconds: number;
  restarts: { name: string; starts: number }[];
  warnings: Record<string, number>;
  settlement: string;
  /** the localnet's faults and the CPU hog */
  hostile: string;
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
const out = (s = '') => process.stdout.write(`${s}\n`);

export function printReport(r: SoakReport): void {
  out();
  out('==== soak report ====');
  out(`chain:   ${r.ledger} events; the localnet achieved ${r.achieved.toFixed(0)} events/s (asked ${r.settings.rate}/s); chain -> indexer -> archive ${r.ingested.toFixed(0)} events/s end to end (first event on the chain to the last in the archive)`);
  out(`reads:   ${r.reads.requests} requests through nginx in ${r.reads.seconds.toFixed(0)} s = ${r.reads.rps.toFixed(0)} req/s on ${r.settings.readConnections} connections; latency p50 ${r.reads.p50Ms.toFixed(0)} ms, p99 ${r.reads.p99Ms.toFixed(0)} ms; errors ${r.reads.errors} (${pct(r.reads.errors / Math.max(1, r.reads.requests))})`);
  out(`sockets: ${r.settings.clients} clients x ${r.settings.perClient} trackingIds; ${r.sockets.connects} connections (${r.sockets.reconnects} reconnects), ${r.connectedAtEnd} connected at the end; ${r.sockets.payments} distinct payments received, ${r.sockets.duplicates} repeats (catch-up from since 0 after a reconnect resends); subscribe errors ${r.sockets.subscribeErrors}, incomplete catch-ups ${r.sockets.incompleteCatchUps}, other errors ${JSON.stringify(r.sockets.errors)}`);
  out(`drain:   ${r.drainSeconds.toFixed(1)} s from the end of the workload until archive, projections, outbox and sockets were complete; replica replay lag during the workload p50 ${(r.replicaLagP50 / 1024).toFixed(0)} KiB, max ${(r.replicaLagMax / 1024).toFixed(0)} KiB, at the end ${r.replicaLag ?? 'n/a'} bytes`);
  out(`settle:  ${r.settlement}`);
  out(`hostile: ${r.hostile}`);
  out(`processes (starts): ${r.restarts.map((p) => `${p.name} ${p.starts}`).join(', ')}`);
  out(`role logs: ${Object.keys(r.warnings).length ? Object.entries(r.warnings).map(([k, n]) => `${k}: ${n}`).join('; ') : 'no dropped notifications, late catch-ups, dead letters or uncaught errors'}`);
  out();
  out('error rate of reads during each fault (5xx, timeouts and refused connections; window = fault until 3 s after recovery):');
  out(`  ${'fault'.padEnd(32)} ${'recovery'.padStart(9)} ${'requests'.padStart(9)} ${'errors'.padStart(7)} ${'rate'.padStart(8)} ${'p99 ms'.padStart(7)}`);
  for (const w of r.windows) {
    const s = w.stats;
    out(`  ${w.name.padEnd(32)} ${`${((w.recovered - w.from) / 1000).toFixed(1)} s`.padStart(9)} ${String(s.requests).padStart(9)} ${String(s.errors).padStart(7)} ${pct(s.errorRate).padStart(8)} ${s.p99Ms.toFixed(0).padStart(7)}`);
  }
  out();
  out('checks:');
  for (const c of r.checks) out(`  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  const failed = r.checks.filter((c) => !c.ok).length;
  out();
  out(`${r.checks.length - failed} passed, ${failed} failed (soak ${r.totalSeconds.toFixed(0)} s)`);
}
