/** JSON Schema as used by ajv and the OpenAPI 3.0 document (the subset both understand). */
export type JsonSchema = { [key: string]: unknown };

export const base58Key: JsonSchema = {
  type: 'string', minLength: 32, maxLength: 44, pattern: '^[1-9A-HJ-NP-Za-km-z]+$', description: 'base58 public key',
};
export const signatureSchema: JsonSchema = {
  type: 'string', minLength: 87, maxLength: 88, pattern: '^[1-9A-HJ-NP-Za-km-z]+$', description: 'base58 transaction signature',
};
export const limitSchema = (def: number, max: number): JsonSchema => ({ type: 'integer', minimum: 1, maximum: max, default: def });
/**
 * Offsets are bounded: a page at offset n costs the database n rows read and skipped, so an
 * unbounded offset makes one request as costly as the caller likes. Deeper than this, a
 * narrower filter (time or slot range) pages further.
 */
export const MAX_OFFSET = 10_000;
export const offsetSchema: JsonSchema = {
  type: 'integer', minimum: 0, maximum: MAX_OFFSET, default: 0,
  description: `rows skipped; at most ${MAX_OFFSET} (narrow the filters, e.g. a time or slot range, to page deeper)`,
};
export const u64String: JsonSchema = { type: 'string', pattern: '^[0-9]+$', description: 'u64 as a decimal string' };
