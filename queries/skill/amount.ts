/**
 * Human-readable amounts to a token's integer base units, exactly: decimal strings and
 * bigint only, never a float ("0.1" + "0.2" must stay exact, and u64 exceeds 2^53).
 */
export const U64_MAX = (1n << 64n) - 1n;

export class AmountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AmountError';
  }
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * "1.5" with 6 decimals → 1500000n. Trailing zeros past the mint's precision are exact
 * and accepted ("1.50" with 1 decimal → 15n); a significant digit past it is refused.
 */
export function toBaseUnits(amount: string, decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) throw new AmountError(`invalid decimals ${decimals}`);
  const m = DECIMAL.exec(amount);
  if (!m) throw new AmountError(`amount '${amount}' is not a decimal number like 12 or 1.5`);
  const whole = m[1] ?? '0';
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) {
    throw new AmountError(`amount '${amount}' has more decimal places than the token's ${decimals}`);
  }
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

/** 1500000n with 6 decimals → "1.5" (the inverse, for display) */
export function formatBaseUnits(units: bigint, decimals: number): string {
  if (units < 0n) throw new AmountError('negative amount');
  const digits = units.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}
