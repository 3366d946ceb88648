/**
 * A bound on how deeply a JSON body nests (HTTP_MAX_JSON_DEPTH). The parser itself takes any
 * depth the body limit allows (tens of thousands of levels in 64 kB), but much of what runs
 * after it recurses (JSON.stringify, structured clones, jsonb, validators) and overflows the
 * stack on such a value: a 500 from a 25 kB request. The body is measured right after
 * parsing, before any handler sees it, by a loop that keeps its own stack.
 */
import type { RequestHandler } from 'express';
import { invalid } from '../../src/kernel/http/errors.js';

/**
 * Whether `value` nests deeper than `max` levels: a scalar is 0 levels, `{}` and `[]` are 1,
 * `{"a":[1]}` is 2. Stops at the first level past `max`.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x !== null && typeof x === 'object') stack.push({ v: x, depth: depth + 1 });
  }
  return false;
}

/** Refuses a parsed body nested deeper than `max` with 400 (invalid_input), before any route runs. */
export function jsonDepthGuard(max: number): RequestHandler {
  return (req, _res, next) => {
    const body: unknown = req.body;
    if (body !== null && typeof body === 'object' && nestsDeeperThan(body, max)) {
      next(invalid(`the JSON body is nested deeper than ${max} levels`));
      return;
    }
    next();
  };
}
