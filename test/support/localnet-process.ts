/**
 * `tributary localnet` as a real process, and the JSON-RPC calls tests make to it: the
 * NON-STANDARD tributary_getLedger / tributary_getState / tributary_dropWebsockets are
 * the oracle of what the chain emitted and the switch for fault injection.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { freePortPair } from './ports.js';
import { startCli, waitFor, type Proc } from './process.js';

export interface LocalnetProcessOptions {
  seed: string;
  /** workload events per second */
  rate: number;
  /** the workload stops after this many events (LOCALNET_MAX_EVENTS) */
  maxEvents: number;
  /** the JSON-RPC port (websocket on the next one); default a free pair */
  port?: number;
  /** the hostile chain's faults, as LOCALNET_FAULTS names them (`all`, `lost-answer=0.2,clock-lag`); default off */
  faults?: string;
  /** LOCALNET_FAULTS_SEED; default the seed */
  faultsSeed?: string;
  env?: Record<string, string>;
}

export interface LocalnetState { slot: number; transactions: number; events: number; eventsByName: Record<string, number> }

export interface LocalnetProcess {
  proc: Proc;
  rpcUrl: string;
  wsUrl: string;
  rpc<T>(method: string, params?: unknown[]): Promise<T>;
  state(): Promise<LocalnetState>;
  /** every event the program emitted, in ledger order */
  ledger(): Promise<TributaryEvent[]>;
  /** resolves once the workload has stopped (LOCALNET_MAX_EVENTS reached) */
  workloadDone(timeoutMs: number): Promise<LocalnetState>;
  stop(): Promise<void>;
}

export async function rpcCall<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.json() as { result?: T; error?: { message: string } };
  if (body.error || body.result === undefined) throw new Error(`${method}: ${body.error?.message ?? 'no result'}`);
  return body.result;
}

/**
 * Starts the localnet on a free port pair and waits until it answers JSON-RPC. A pair found
 * free can be taken before the localnet binds it (another process's outgoing connection
 * gets its local port from the same range), and the localnet then exits: a process that
 * exits before answering is started again on a new pair, twice at most, where a pair was
 * not given; its output is in the error otherwise.
 */
export async function startLocalnetProcess(opts: LocalnetProcessOptions): Promise<LocalnetProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (!(err instanceof ExitedEarly) || opts.port !== undefined || attempt >= 3) throw err;
    }
  }
}

class ExitedEarly extends Error {}

async function startOnce(opts: LocalnetProcessOptions): Promise<LocalnetProcess> {
  const port = opts.port ?? await freePortPair();
  const dir = mkdtempSync(join(tmpdir(), 'tributary-localnet-'));
  const rpcUrl = `http://127.0.0.1:${port}`;
  const proc = startCli(['localnet'], {
    LOG_LEVEL: 'warn', LOCALNET_PORT: String(port), LOCALNET_SEED: opts.seed, LOCALNET_RATE: String(opts.rate),
    LOCALNET_MAX_EVENTS: String(opts.maxEvents), LOCALNET_FIXTURES: join(dir, 'fixtures.json'),
    ...(opts.faults === undefined ? {} : { LOCALNET_FAULTS: opts.faults }),
    ...(opts.faultsSeed === undefined ? {} : { LOCALNET_FAULTS_SEED: opts.faultsSeed }), ...opts.env,
  });
  const rpc = <T>(method: string, params: unknown[] = []): Promise<T> => rpcCall<T>(rpcUrl, method, params);
  const state = (): Promise<LocalnetState> => rpc<LocalnetState>('tributary_getState');
  const stop = async (): Promise<void> => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const exited = proc.exited.then((code) => { throw new ExitedEarly(`localnet on ${port} exited (${code}) before answering\n${proc.output()}`); });
    exited.catch(() => undefined); // the race below reports it
    await Promise.race([waitFor(async () => (await rpc<string>('getHealth')) === 'ok', 60_000, `localnet on ${port}`), exited]);
  } catch (err) {
    await stop();
    if (err instanceof ExitedEarly) throw err;
    throw new Error(`${(err as Error).message}\n${proc.output()}`);
  }
  return {
    proc, rpcUrl, wsUrl: `ws://127.0.0.1:${port + 1}`, rpc, state, stop,
    async ledger() {
      const out: TributaryEvent[] = [];
      for (;;) {
        const page = await rpc<{ total: number; events: TributaryEvent[] }>('tributary_getLedger', [{ offset: out.length, limit: 10_000 }]);
        out.push(...page.events);
        if (page.events.length === 0 || out.length >= page.total) return out;
      }
    },
    async workloadDone(timeoutMs) {
      // the workload has stopped when the ledger no longer grows over a few slots
      let last = -1;
      return waitFor(async () => {
        const s = await state();
        const done = s.events >= opts.maxEvents && s.events === last;
        last = s.events;
        if (done) return s;
        await new Promise((r) => setTimeout(r, 700));
        return undefined;
      }, timeoutMs, `the localnet workload to reach ${opts.maxEvents} events`);
    },
  };
}
