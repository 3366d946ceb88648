/**
 * A worker's rounds: once started, `tick` runs, then again `periodMs` after each round
 * ends, never two at once. A failed round is reported and the next one still comes. `stop()` plans no
 * further round and waits for the one in flight. The scheduler and the settler run so.
 */
export interface Rounds {
  /** true once stop() was called: a long round checks it between its steps */
  readonly stopped: boolean;
  start(): void;
  stop(): Promise<void>;
}

export function createRounds(tick: () => Promise<void>, periodMs: number, onError: (err: Error) => void): Rounds {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const loop = (): void => {
    if (stopped) return;
    running = tick()
      .catch(onError)
      .finally(() => { if (!stopped) timer = setTimeout(loop, periodMs); });
  };
  return {
    get stopped() { return stopped; },
    start: loop,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
