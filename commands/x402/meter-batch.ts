/**
 * The meter scripts of concurrent requests, sent together: calls made while this node's event
 * loop handles one round of sockets go to Redis as one command at the end of that round, a
 * batch script that runs each call's script in turn, rather than a round trip each. Every
 * call is still its own script on its own keys, run in the order queued, and learns its own
 * answer or error: grouping changes how they travel, never what each one checks (one batch
 * is also atomic as a whole, which only makes it stricter). A call alone in its round is sent
 * alone. On a cluster (one script's keys must keep to one slot) each call is sent alone.
 *
 * One command instead of a pipeline of scripts: the client builds, writes and reads one
 * command per round rather than one per request, and Redis runs one script (the x402 bench's
 * pay-as-you-go and prepaid paths: test/bench/README.md).
 */
import type { Redis } from 'ioredis';
import { luaScript, runScript, type LuaScript } from '../../infra/redis/scripts.js';

type Arg = string | number;
interface Call { keys: readonly string[]; args: readonly Arg[]; done: (v: unknown) => void; failed: (err: unknown) => void }

/** What a call of the batch answers when its own script failed: the marker, then the error's text. */
const FAILED = 'tributary:script-failed';

/**
 * `s` run once per call: ARGV[1] the number of calls, then per call its number of keys and of
 * arguments and the arguments; KEYS all the calls' keys in order. The script's body becomes a
 * function of its own KEYS and ARGV (its top level is a chunk, so its locals and returns carry
 * over), run under pcall so one call's error is that call's alone.
 */
function batchOf<T>(s: LuaScript<T>): LuaScript<unknown[]> {
  return luaScript<unknown[]>(`${s.name}Batch`, `
local function one(KEYS, ARGV)
${s.lua}
end
local out, k, a = {}, 1, 2
for i = 1, tonumber(ARGV[1]) do
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local keys, args = {}, {}
  for j = 1, nk do keys[j] = KEYS[k]; k = k + 1 end
  for j = 1, na do args[j] = ARGV[a]; a = a + 1 end
  local ok, r = pcall(one, keys, args)
  if ok then out[i] = r else out[i] = {'${FAILED}', type(r) == 'table' and r.err or tostring(r)} end
end
return out
`);
}

const batches = new Map<string, LuaScript<unknown[]>>();
const queues = new WeakMap<Redis, Map<string, Call[]>>();

/** Calls in one batch at most: a batch blocks Redis while it runs (some 10 µs a call), so a burst goes as several. */
const BATCH_MAX = 256;

function flush<T>(redis: Redis, s: LuaScript<T>, calls: Call[]): void {
  if (calls.length > BATCH_MAX) {
    for (let i = 0; i < calls.length; i += BATCH_MAX) flush(redis, s, calls.slice(i, i + BATCH_MAX));
    return;
  }
  if (calls.length === 1) {
    const c = calls[0]!;
    runScript(redis, s, c.keys, c.args).then(c.done, c.failed);
    return;
  }
  let batch = batches.get(s.name);
  if (!batch) batches.set(s.name, batch = batchOf(s));
  const keys: string[] = [];
  const args: Arg[] = [calls.length];
  for (const c of calls) {
    for (const k of c.keys) keys.push(k);
    args.push(c.keys.length, c.args.length);
    for (const a of c.args) args.push(a);
  }
  runScript(redis, batch, keys, args).then((results) => {
    calls.forEach((c, i) => {
      const r = results[i];
      if (r === undefined) c.failed(new Error('the meter batch returned no answer for this call'));
      else if (Array.isArray(r) && r[0] === FAILED) c.failed(new Error(String(r[1])));
      else c.done(r);
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
