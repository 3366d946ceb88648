/**
 * The meter scripts of concurrent requests, sent together: calls made while this node's event
 * loop handles one round of sockets go to Redis as one pipeline (one write, one read of the
 * answers) at the end of that round, rather than a round trip each. Every call is still its
 * own script, run atomically on its own keys in the order queued: grouping changes how they
 * travel, never what each one checks. A call alone in its round is sent alone. On a cluster
 * (a pipeline must keep to one slot) each call is sent alone.
 */
import type { Redis } from 'ioredis';
import { pipelineFor, runScript, type LuaScript } from '../../infra/redis/scripts.js';

type Arg = string | number;
interface Call { keys: readonly string[]; args: readonly Arg[]; done: (v: unknown) => void; failed: (err: unknown) => void }
type ScriptCall = (numKeys: number, ...keysAndArgs: Arg[]) => unknown;

const queues = new WeakMap<Redis, Map<string, Call[]>>();

function flush<T>(redis: Redis, s: LuaScript<T>, calls: Call[]): void {
  if (calls.length === 1) {
    const c = calls[0]!;
    runScript(redis, s, c.keys, c.args).then(c.done, c.failed);
    return;
  }
  const pipeline = pipelineFor(redis, [s]);
  const queue = (pipeline as unknown as Record<string, ScriptCall>)[s.name]!;
  for (const c of calls) queue.call(pipeline, c.keys.length, ...c.keys, ...c.args);
  pipeline.exec().then((results) => {
    calls.forEach((c, i) => {
      const [err, value] = results?.[i] ?? [new Error('the meter pipeline returned no answer for this call'), undefined];
      if (err) c.failed(err); else c.done(value);
    });
  }, (err: unknown) => { for (const c of calls) c.failed(err); });
}

/** Runs `s` like runScript, grouped with the other calls of this round of the event loop on the same connection. */
export function runScriptGrouped<T>(redis: Redis, s: LuaScript<T>, keys: readonly string[], args: readonly Arg[]): Promise<T> {
  if ((redis as { isCluster?: boolean }).isCluster) return runScript(redis, s, keys, args);
  let byScript = queues.get(redis);
  if (!byScript) queues.set(redis, byScript = new Map());
  const scripts = byScript;
  return new Promise<T>((done, failed) => {
    const waiting = scripts.get(s.name);
    const call = { keys, args, done: done as (v: unknown) => void, failed };
    if (waiting) { waiting.push(call); return; }
    scripts.set(s.name, [call]);
    setImmediate(() => {
      const calls = scripts.get(s.name)!;
      scripts.delete(s.name);
      flush(redis, s, calls);
    });
  });
}
