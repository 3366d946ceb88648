/**
 * Load on the compose stack while containers restart: readers through nginx (a REST read
 * and the health route in turn, one request at a time per reader) and payers (what
 * `tributary pay --scheme x402://payg` does, in this process, the spare wallets in turn). Every
 * outcome is counted in the window it fell in, so each restart reports its own errors.
 */
import { payAndFetch } from '../../commands/x402/client/pay.js';
import { parseWallet } from '../../src/app/cli/pay.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** errors exclude 429s: the service's own rate limit (every client here is one address) */
export interface WindowFigures { name: string; ms: number; reads: number; readErrors: number; pays: number; payErrors: number; limited: number; firstErrors: string[] }

export interface Load {
  /** starts a new window; the previous one closes */
  window(name: string): void;
  stop(): Promise<WindowFigures[]>;
}

export function startLoad(base: string, rpcUrl: string, wallets: readonly string[], opts: { readers: number; payers: number; readEveryMs: number; payEveryMs: number }): Load {
  const windows: (WindowFigures & { t0: number })[] = [];
  const current = () => windows[windows.length - 1]!;
  const open = (name: string) => windows.push({ name, t0: Date.now(), ms: 0, reads: 0, readErrors: 0, pays: 0, payErrors: 0, limited: 0, firstErrors: [] });
  open('before');
  let running = true;
  const note = (w: WindowFigures, what: string) => {
    const kind = what.split(' ')[0]!;
    if (w.firstErrors.filter((e) => e.startsWith(kind)).length < 2) w.firstErrors.push(what.slice(0, 140));
  };

  const reader = async (n: number) => {
    const paths = ['/v1/events?limit=5', '/v1/health', '/v1/events/count?eventName=PaymentRecord'];
    for (let i = n; running; i += 1) {
      const w = current();
      w.reads += 1;
      try {
        const res = await fetch(`${base}${paths[i % paths.length]!}`, { signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (res.status === 429) w.limited += 1;
        else if (!res.ok) {
          w.readErrors += 1;
          note(w, `read ${res.status}`);
        }
      } catch (err) {
        w.readErrors += 1;
        note(w, `read ${String(err)}`);
      }
      await sleep(opts.readEveryMs);
    }
  };

  const payer = async (n: number) => {
    for (let i = n; running; i += 1) {
      const w = current();
      w.pays += 1;
      try {
        const r = await payAndFetch(`${base}/v1/x402/demo`, { wallet: parseWallet(wallets[i % wallets.length]!), rpcUrl, scheme: 'x402://payg' });
        const text = await r.response.text();
        if (r.response.status === 429) w.limited += 1;
        else if (!r.response.ok) {
          w.payErrors += 1;
          note(w, `pay ${r.response.status} ${text}`);
        }
      } catch (err) {
        w.payErrors += 1;
        note(w, `pay ${err instanceof Error ? err.message : String(err)}`);
      }
      await sleep(opts.payEveryMs);
    }
  };

  const tasks = [
    ...Array.from({ length: opts.readers }, (_, i) => reader(i)),
    ...Array.from({ length: opts.payers }, (_, i) => payer(i)),
  ];
  return {
    window: open,
    async stop() {
      open('end');
      running = false;
      await Promise.all(tasks);
      const out = windows.slice(0, -1);
      out.forEach((w, i) => { w.ms = windows[i + 1]!.t0 - w.t0; });
      return out.map(({ t0: _t0, ...w }) => w);
    },
  };
}
