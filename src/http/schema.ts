/** JSON Schema as used by ajv and the OpenAPI 3.0 document (the subset both understand). */
export type JsonSchema = { [key: string]: unknown };

export const base58Key: JsonSchema = {
  type: 'string', minLength: 32, maxLength: 44, pattern: '^[1-9A-HJ-NP-Za-km-z]+$', description: 'base58 public key',
};
export const signatureSchema: JsonSchema = {
  type: 'string', minLength: 87, maxLength: 88, pattern: '^[1-9A-HJ-NP-Za-km-z]+$', description: 'base58 transaction signature',
};
export const limitSchema = (def: number, max: number): JsonSchema => ({ type: 'integer', minimum: 1, maximum: max, default: def });
export const offsetSchema: JsonSchema = { type: 'integer', minimum: 0, maximum: 10_000_000, default: 0 };
export const u64String: JsonSchema = { type: 'string', pattern: '^[0-9]+$', description: 'u64 as a decimal string' };
