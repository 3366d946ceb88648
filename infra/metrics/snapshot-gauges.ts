/**
 * Gauges filled at scrape time from one snapshot of shared state. prom-client collects
 * every metric at once, so one read, kept for 250 ms, serves all the gauges of a scrape;
 * a read that fails leaves them empty rather than failing the scrape.
 */
import { Gauge, type Registry } from 'prom-client';

export type SnapshotGauge<S> = (name: string, help: string, labelNames: string[], fill: (g: Gauge, s: S) => void) => Gauge;

/** A maker of gauges on `registry` that all read the snapshot `read` returns. */
export function snapshotGauges<S>(registry: Registry, read: () => Promise<S>): SnapshotGauge<S> {
  let current: { at: number; snap: Promise<S | undefined> } | undefined;
  const snapshot = (): Promise<S | undefined> => {
    if (!current || Date.now() - current.at > 250) current = { at: Date.now(), snap: read().catch(() => undefined) };
    return current.snap;
  };
  return (name, help, labelNames, fill) => new Gauge({
    name, help, labelNames, registers: [registry],
    async collect() {
      const s = await snapshot();
      this.reset();
      if (s !== undefined) fill(this, s);
    },
  });
}
