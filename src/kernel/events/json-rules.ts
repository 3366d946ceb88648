/**
 * How the codec writes an event's fields as JSON, shared by everything that must agree
 * with it: the codec itself, the shape check of stream entries, the API's JSON schemas
 * and the generator of the event types.
 */

/** Byte arrays of these names are text: written as a string (trailing zeros cut). */
export const TEXT_FIELDS: ReadonlySet<string> = new Set(['memo', 'name', 'url', 'referral_code']);
/** Text fields whose raw bytes are kept as well, as `<name>_hex`. */
export const RAW_KEPT: ReadonlySet<string> = new Set(['memo']);
/** Integers too wide for a JSON number: written as decimal strings. */
export const WIDE_INTS: ReadonlySet<string> = new Set(['u64', 'i64', 'u128', 'i128']);
/** Padding fields are left out. */
export const isPadding = (name: string): boolean => /^_?padding/.test(name) || name.startsWith('_');
