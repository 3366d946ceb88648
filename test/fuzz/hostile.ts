/**
 * Hostile inputs from a route's JSON schemas (fast-check arbitraries): wrong types, huge
 * and strange strings (NUL, lone surrogates, right-to-left marks, emoji), negative and
 * out-of-range numbers, arrays where scalars belong, prototype-pollution keys, encoded
 * slashes and dots in path segments, and now and then a plausible value so that the
 * route's deeper code runs too.
 */
import fc from 'fast-check';
import bs58 from 'bs58';

export type Schema = Record<string, unknown>;

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf'] as const;

const NASTY = [
  '', ' ', '\u0000', 'a\u0000b', 'null', 'undefined', 'NaN', 'Infinity', '-Infinity', '-1', '-0', '0', '0x10', '1e309', '1.5', ' 1',
  '9'.repeat(40), '-9007199254740993', '18446744073709551616', 'true', 'TRUE', '[]', '{}', '[object Object]', '{"$gt":""}',
  "' OR 1=1 --", '"; DROP TABLE events; --', '<script>alert(1)</script>', '../../etc/passwd', '..\\..\\boot.ini', '%00', '%', '\\',
  '\uD800', '\uDFFF\uD800', '\uFEFF', '\u202E', '\u200B', '😀'.repeat(50), 'Ā'.repeat(300), '\r\n', '\t', '${jndi:ldap://x}',
  ...PROTO_KEYS,
];

const base58Key = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bs58.encode(b));
const base58Sig = fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => bs58.encode(b));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(1000, 2000).map((n) => 'A'.repeat(n)) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: base58Key.map((k) => `${k}${k}`) },
);

/** Strings that are odd but may well pass a schema: the route's own code then meets them. */
const EDGY = ['a', '0', '-1', '1700000000', '2024-02-29T23:59:59Z', '1970-01-01', '9999-12-31T23:59:59.999Z', '99999999999999999999', 'Infinity',
  'a\u0000b', '\u0000', '😀', '\uD800', '\u202E', "'", '"', '%', '\\', '__proto__', 'constructor', ' ', 'Ā'.repeat(30), 'x'.repeat(200)];

/** A value the schema accepts (so that validation passes and the route's code runs), at its edges. */
export function plausible(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const s = schema ?? {};
  if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]));
  // a body or field of several shapes (the facilitator's Tributary and standard bodies): any of them
  if (Array.isArray(s['anyOf'])) return fc.oneof(...(s['anyOf'] as Schema[]).map((a) => plausible(a)));
  const min = typeof s['minimum'] === 'number' ? s['minimum'] : undefined;
  const max = typeof s['maximum'] === 'number' ? s['maximum'] : undefined;
  switch (s['type']) {
    case 'integer': {
      const lo = min ?? -9_999_999_999_999_999;
      const hi = max ?? 9_999_999_999_999_999;
      return fc.oneof(fc.constantFrom(lo, hi, Math.max(lo, Math.min(hi, 0)), Math.max(lo, Math.min(hi, 1))),
        fc.integer({ min: Math.max(lo, -(2 ** 31)), max: Math.min(hi, 2 ** 31) }));
    }
    case 'number': return fc.double({ noNaN: true, noDefaultInfinity: true, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) });
    case 'boolean': return fc.boolean();
    case 'array': {
      const minLength = typeof s['minItems'] === 'number' ? s['minItems'] : 0;
      const maxLength = typeof s['maxItems'] === 'number' ? s['maxItems'] : minLength + 3;
      return fc.array(plausible(s['items'] as Schema | undefined), { minLength, maxLength });
    }
    case 'object': return plausibleObject(s);
    default: return plausibleString(s);
  }
}

function plausibleString(s: Schema): fc.Arbitrary<string> {
  const minLength = typeof s['minLength'] === 'number' ? s['minLength'] : 0;
  const maxLength = typeof s['maxLength'] === 'number' ? s['maxLength'] : 1000;
  const fits = (v: string) => v.length >= minLength && v.length <= maxLength;
  const pattern = typeof s['pattern'] === 'string' ? s['pattern'] : undefined;
  if (pattern?.includes('1-9A-HJ-NP-Za-km-z')) return minLength >= 80 ? base58Sig : base58Key;
  if (pattern) return fc.stringMatching(new RegExp(pattern), { size: 'small' }).filter(fits);
  if (s['format'] === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  const edgy = EDGY.filter(fits);
  return fc.oneof(
    ...(edgy.length ? [fc.constantFrom(...edgy)] : []),
    ...(minLength <= 43 && maxLength >= 44 ? [base58Key] : []),
    fc.string({ unit: 'grapheme', minLength, maxLength: Math.min(maxLength, minLength + 20) }),
  );
}

function plausibleObject(s: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props = (s['properties'] ?? {}) as Record<string, Schema>;
  const names = Object.keys(props);
  if (names.length === 0) return fc.constant({});
  const required = ((s['required'] ?? []) as string[]).filter((n) => names.includes(n));
  return fc.record(Object.fromEntries(names.map((n) => [n, plausible(props[n])])), { requiredKeys: required });
}

/** Query pairs the schema accepts: its required parameters and some optional ones. */
export function plausibleQuery(params: { name: string; schema: Schema; required?: boolean }[]): fc.Arbitrary<[string, string][]> {
  const pair = (p: { name: string; schema: Schema }) => plausible(p.schema).map((v) => [p.name, String(v)] as [string, string]);
  // each optional parameter in one request of three: routes limit how many may be combined
  const parts = params.map((p) => (p.required ? pair(p) : fc.oneof({ weight: 1, arbitrary: pair(p) }, { weight: 2, arbitrary: fc.constant(undefined) })));
  return fc.tuple(...parts).map((ps) => ps.filter((x): x is [string, string] => x !== undefined));
}

/** One hostile change to plausible query pairs: a value, an unknown or polluting name, a repeated name, a broken tail. */
export function mutateQuery(pairs: [string, string][]): fc.Arbitrary<string> {
  const at = pairs.length ? fc.nat({ max: pairs.length - 1 }) : fc.constant(-1);
  return fc.oneof(
    fc.tuple(at, hostileString).map(([i, v]) => render(pairs.map((p, j) => (j === i ? [p[0], v] : p)))),
    fc.tuple(fc.constantFrom(...PROTO_KEYS, 'limit[]', 'a[b]', '__proto__[polluted]', ''), hostileString).map((extra) => render([...pairs, extra])),
    at.map((i) => render(i >= 0 ? [...pairs, pairs[i]!] : pairs)),
    fc.constantFrom('&', '&&', '=', '=x', '%', '%zz=1', 'a=%', '%5F%5Fproto%5F%5F=1').map((tail) => `${render(pairs) || '?'}&${tail}`),
  );
}

export function render(pairs: [string, string][]): string {
  return pairs.length ? `?${pairs.map(([n, v]) => `${pct(n)}=${pct(v)}`).join('&')}` : '';
}

/** Any JSON value at all, from the schema's point of view mostly of the wrong type. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, -0.5, 1e308, -1e308, 2 ** 53 + 1, 2 ** 64, 1e-320) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom({}, [], [[[[[]]]]], { a: { b: { c: {} } } }, Array.from({ length: 5000 }, () => 1)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Hostile or plausible, per property; plus keys the schema never named. */
export function bodyFor(schema: Schema | undefined): fc.Arbitrary<string> {
  const props = (schema?.['properties'] ?? {}) as Record<string, Schema>;
  const entry = (name: string) => fc.tuple(fc.constant(name), fc.oneof(plausible(props[name]), hostileJson));
  const known = Object.keys(props).map((n) => fc.option(entry(n), { nil: undefined }));
  const extra = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), hostileString), fc.oneof(pollution, hostileJson)), { maxLength: 3 });
  const asObject = fc.tuple(fc.tuple(...known), extra).map(([k, e]) => objectText([...k.filter((x) => x !== undefined), ...e]));
  return fc.oneof(
    { weight: 5, arbitrary: asObject },
    { weight: 1, arbitrary: hostileJson.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: malformedJson },
  );
}

const pollution = fc.constant({ polluted: 'yes', isAdmin: true });

/** JSON text of an object whose keys may include __proto__ as an own key (JSON.stringify cannot say that). */
export function objectText(entries: [string, unknown][]): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;
}

export const malformedJson: fc.Arbitrary<string> = fc.constantFrom(
  '{', '}', '{"a":', '{"a" 1}', "{'a':1}", '[1,2', 'nul', 'undefined', '{"a":1,}', '\u0000', '\uFEFF{}', '{"a":"\\u00"}',
  '{"a":NaN}', '{"a":Infinity}', '1 2', '[]]', '"unterminated', `${'['.repeat(5000)}${']'.repeat(5000)}`, `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`,
);

/** A path segment: plausible (percent-encoded) or hostile and raw (encoded slashes and dots, bad escapes). */
export function segmentFor(schema: Schema | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: plausible(schema).map((v) => pct(String(v))) },
    { weight: 2, arbitrary: fc.constantFrom('%2F', 'a%2Fb', '..', '.', '%2e%2e', '%2E', '%2e%2e%2fetc%2fpasswd', '%00', 'a%00', '%', '%zz', '%C0%AF',
      '%ff', '%E2%80%AE', '%F0%9F%98%80', '__proto__', 'constructor', '-1', '1e999', '99999999999999999999', '0x1f', '%20', ';', ',', '*', '$',
      `${'B'.repeat(3000)}`) },
    { weight: 2, arbitrary: hostileString.map(pct) },
  );
}

/** encodeURIComponent over UTF-8 bytes, which (unlike it) accepts lone surrogates. */
export function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Query pairs: the schema's names with hostile or plausible values (some repeated: arrays), and names it never named. */
export function queryFor(params: { name: string; schema: Schema }[]): fc.Arbitrary<string> {
  const value = (s: Schema) => fc.oneof(plausible(s).map(String), hostileString);
  const known = params.map((p) => fc.option(fc.array(value(p.schema), { minLength: 1, maxLength: 2 }).map((vs) => vs.map((v) => [p.name, v] as [string, string])), { nil: undefined }));
  const extra = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS, 'limit[]', 'a[b]', '__proto__[polluted]', ''), hostileString), hostileString), { maxLength: 2 });
  return fc.tuple(fc.tuple(...known), extra).map(([k, e]) => render([...k.filter((x) => x !== undefined).flat(), ...e]));
}
