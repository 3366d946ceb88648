/**
 * Lua scripts run by EVALSHA, sent whole only when Redis does not have them (after a
 * restart or a SCRIPT FLUSH it answers NOSCRIPT, and the script is sent once with EVAL).
 * This is ioredis's defineCommand: the command is defined on each connection the first
 * time a script runs there; a pipeline loads the scripts it queues before it executes.
 */
import type { ChainableCommander, Redis } from 'ioredis';

/** A named Lua script; T is what it returns. Names must not shadow Redis commands. */
export interface LuaScript<T> { readonly name: string; readonly lua: string; readonly _result?: T }

export function luaScript<T>(name: string, lua: string): LuaScript<T> {
  return { name, lua };
}

type ScriptCall = (numKeys: number, ...keysAndArgs: (string | number)[]) => unknown;
type Arg = string | number;

function define(redis: Redis, s: LuaScript<unknown>): void {
  if (s.name in redis) return;
  redis.defineCommand(s.name, { lua: s.lua });
  // A script queued in one of ioredis's automatic pipelines can lose its reply (the
  // pipeline's results come back shorter than its callbacks: "results[i] is not
  // iterable"), so on an auto-pipelining connection scripts go straight to EVALSHA.
  const ignored = redis.options.autoPipeliningIgnoredCommands;
  if (ignored && !ignored.includes(s.name)) ignored.push(s.name);
}

/** Runs a script on a connection: EVALSHA, with EVAL on NOSCRIPT. */
export async function runScript<T>(redis: Redis, s: LuaScript<T>, keys: readonly string[], args: readonly Arg[]): Promise<T> {
  define(redis, s);
  const call = (redis as unknown as Record<string, ScriptCall>)[s.name]!;
  return (await (call.call(redis, keys.length, ...keys, ...args) as Promise<unknown>)) as T;
}

/** A pipeline that can queue these scripts (they must be defined before it is created). */
export function pipelineFor(redis: Redis, scripts: readonly LuaScript<unknown>[]): ChainableCommander {
  for (const s of scripts) define(redis, s);
  return redis.pipeline();
}

/** Queues a script on a pipeline made by pipelineFor. */
export function queueScript(pipe: ChainableCommander, s: LuaScript<unknown>, keys: readonly string[], args: readonly Arg[]): void {
  const call = (pipe as unknown as Record<string, ScriptCall | undefined>)[s.name];
  if (!call) throw new Error(`script ${s.name} was not defined before the pipeline was created`);
  call.call(pipe, keys.length, ...keys, ...args);
}
