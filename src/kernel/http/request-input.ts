/**
 * A route's request input as the Api reads it, on express's path and on front's
 * (cached-hits.ts): the spelling of integer and boolean values, ajv's validation with the
 * 400's message, and the cache key's JSON of the validated input.
 */
import type { ValidateFunction } from 'ajv';
import { invalid } from './errors.js';
import type { JsonSchema } from './schema.js';

/** JSON with keys sorted: equal queries, equal cache keys. */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
}

/**
 * ajv coerces strings the way JavaScript does ("0x10" → 16, " " → 0). Query and path
 * values of integer or boolean type must be spelled plainly; anything else is a 400.
 */
export function checkSpelling(schema: JsonSchema | undefined, data: Record<string, unknown>, where: string): void {
  const props = (schema?.['properties'] ?? {}) as Record<string, JsonSchema>;
  for (const [name, value] of Object.entries(data)) {
    const type = props[name]?.['type'];
    if (typeof value !== 'string') continue;
    if (type === 'integer' && !/^-?\d{1,16}$/.test(value)) throw invalid(`${where} '${name}' must be an integer`);
    if (type === 'boolean' && !/^(true|false)$/.test(value)) throw invalid(`${where} '${name}' must be true or false`);
  }
}

export function validate(v: ValidateFunction | undefined, data: unknown, where: string): unknown {
  if (!v) return data;
  if (v(data)) return data;
  const e = v.errors?.[0];
  const field = e?.instancePath ? e.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
  const what = e?.keyword === 'additionalProperties'
    ? `unknown ${where} parameter '${String((e.params as { additionalProperty?: string }).additionalProperty)}'`
    : e?.keyword === 'required'
      ? `missing ${where} field '${String((e.params as { missingProperty?: string }).missingProperty)}'`
      : `${where}${field ? ` '${field}'` : ''} ${e?.message ?? 'is invalid'}`;
  throw invalid(what);
}
