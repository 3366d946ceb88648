/** Amounts, dates and keys as people read them. */

/** Digits grouped by thousands: "1234567.5" → "1,234,567.5". */
export function group(value: string | number | bigint | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const [whole = '', frac] = String(value).split('.');
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac ? `.${frac}` : '');
}

/** Base units with the mint's decimals: ("1500000", 6) → "1.5". Exact (bigint), no float rounding. */
export function amount(baseUnits: string | number | bigint, decimals: number): string {
  const raw = BigInt(baseUnits);
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const frac = decimals > 0 ? digits.slice(digits.length - decimals).replace(/0+$/, '') : '';
  return (negative ? '-' : '') + group(whole) + (frac ? `.${frac}` : '');
}

/** Unix seconds → "2026-12-06 07:10 UTC". */
export function when(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** An ISO time or unix seconds → the same words as when(). */
export function whenIso(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return when(typeof value === 'number' ? value : Date.parse(value) / 1000);
}

/** A base58 key shortened for a table cell: "AbCd…WxYz" (the whole key goes in a title). */
export function short(key: string | null | undefined): string {
  return key ? `${key.slice(0, 4)}…${key.slice(-4)}` : '—';
}

/** Seconds as a period people say: 2592000 → "30 days", 86400 → "day". */
export function period(seconds: number): string {
  const units: [number, string][] = [[86_400, 'day'], [3_600, 'hour'], [60, 'minute']];
  for (const [size, name] of units) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return n === 1 ? name : `${n} ${name}s`;
    }
  }
  return `${seconds} seconds`;
}
