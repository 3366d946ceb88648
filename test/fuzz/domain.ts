/**
 * Plausible values a schema cannot describe: a parameter whose string carries a format of
 * its own (the skill route's checkout session) gets values in that format, at its edges,
 * so that the fuzz reaches the code behind the parsing.
 */
import fc from 'fast-check';
import { hostileJson, hostileString } from './hostile.js';

export interface Known { mints: string[]; keys: string[] }

/** A checkout session (base64 or base64url JSON, short or long keys) with odd but often valid fields. */
export function checkoutSession(known: Known): fc.Arbitrary<string> {
  // each field valid in most sessions (so that whole sessions often are), else odd or hostile
  const mostly = <T>(ok: fc.Arbitrary<T>, odd: unknown[] = []) =>
    fc.oneof({ weight: 16, arbitrary: ok }, { weight: 1, arbitrary: hostileJson }, ...(odd.length ? [{ weight: 1, arbitrary: fc.constantFrom(...odd) }] : []));
  const key = fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...known.mints, ...known.keys) }, { weight: 1, arbitrary: hostileString });
  const amount = mostly(fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.nat({ max: 999_999 })).map(([a, b]) => `${a}.${String(b).padStart(6, '0').replace(/0+$/, '') || '0'}`) },
    { weight: 2, arbitrary: fc.constantFrom('1', '1.5', '0.000001', '18446744073709551615', '18446744073709.551615', '18446744073709.551616', '9'.repeat(80)) },
    { weight: 1, arbitrary: fc.double({ min: 0, max: 1e30, noNaN: true }) },
  ), ['0', '0.0', '-1', '1e9', ' 1', '1,5', 'NaN', '0.0000000000000000001', `1.${'0'.repeat(78)}1`]);
  const frequency = mostly(fc.constantFrom('Daily', 'weekly', 'semi-annually', 'Custom:3600', '86400', 1, 4_294_967_296), ['custom(0)', '0', 9_007_199_254_740_993, -5]);
  const text = mostly(fc.constantFrom('', 'order-1', 'x'.repeat(64), 'é'.repeat(32), '\u0000', '😀'.repeat(16), '<b>*md*</b>`', '\n# heading\n```'), ['x'.repeat(65), 'é'.repeat(33)]);
  const url = mostly(fc.constantFrom('https://shop.example/ok', '', 'https://x.example/](javascript:alert(1))', 'http://[::1]:1/'), ['javascript:alert(1)']);
  const session = fc.record({
    tm: key, r: key, g: key, a: amount, pf: frequency, ar: mostly(fc.boolean(), ['yes']), mr: mostly(fc.constantFrom(0, 4294967295, null, '7'), [4294967296, -1]),
    tid: text, memo: text, su: url, cu: url,
  }, { requiredKeys: ['tm', 'r', 'g', 'a'] });
  const longNames: Record<string, string> = { tm: 'tokenMint', r: 'recipient', g: 'gateway', a: 'amount', pf: 'paymentFrequency', mr: 'maxRenewals', tid: 'trackingId' };
  return fc.tuple(session, fc.boolean(), fc.boolean()).map(([s, spelledOut, url]) => {
    const body = spelledOut ? Object.fromEntries(Object.entries(s).map(([k, v]) => [longNames[k] ?? k, v])) : s;
    const b64 = Buffer.from(JSON.stringify(body)).toString(url ? 'base64url' : 'base64');
    return b64.length <= 4096 ? b64 : b64.slice(0, 4096);
  });
}
