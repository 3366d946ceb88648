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
  if (value === null || typeof value !== 'object') return false;
  if (max < 1) return true;
  // two parallel stacks of the containers still to open and their depths (each within max): no allocation per value
  const containers: object[] = [value];
  const depths: number[] = [1];
  /** false when `x` nests past max (its depth being `depth + 1`); else opened later if it holds anything */
  const visit = (x: unknown, depth: number): boolean => {
    if (x === null || typeof x !== 'object') return true;
    if (depth === max) return false;
    // an empty array adds its level and nothing below it: counted here, never opened
    if (!(Array.isArray(x) && x.length === 0)) { containers.push(x); depths.push(depth + 1); }
    return true;
  };
  while (containers.length > 0) {
    const v = containers.pop()!;
    const depth = depths.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i += 1) if (!visit(v[i], depth)) return true;
    } else {
      const o = v as Record<string, unknown>;
      // parsed JSON: plain objects with own keys only
      for (const k in o) if (!visit(o[k], depth)) return true;
    }
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
