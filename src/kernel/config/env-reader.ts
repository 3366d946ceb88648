/**
 * Typed readers over an environment map. Each read records the variable (name, default,
 * meaning) so docs/configuration.md's table and `tributary config` come from the same source, and
 * collects every problem so the process stops once, naming each bad variable.
 */
export interface VarDoc { name: string; default: string; description: string }

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export class EnvReader {
  readonly docs: VarDoc[] = [];
  readonly problems: string[] = [];

  constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  private raw(name: string, def: string | undefined, description: string): string | undefined {
    this.docs.push({ name, default: def ?? '(unset)', description });
    const v = this.env[name];
    return v === undefined || v === '' ? def : v;
  }

  private fail(name: string, expected: string, got: string): undefined {
    this.problems.push(`${name}: expected ${expected}, got ${JSON.stringify(got)}`);
    return undefined;
  }

  str(name: string, def: string, description: string): string {
    return this.raw(name, def, description) ?? def;
  }

  optStr(name: string, description: string): string | undefined {
    return this.raw(name, undefined, description);
  }

  int(name: string, def: number, description: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.raw(name, String(def), description) ?? String(def);
    const n = /^-?\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) return this.fail(name, `an integer in ${min}..${max}`, v) ?? def;
    return n;
  }

  bool(name: string, def: boolean, description: string): boolean {
    const v = (this.raw(name, String(def), description) ?? String(def)).toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    return this.fail(name, 'true or false', v) ?? def;
  }

  oneOf<T extends string>(name: string, values: readonly T[], def: T, description: string): T {
    const v = this.raw(name, def, description) ?? def;
    if (!(values as readonly string[]).includes(v)) return this.fail(name, `one of ${values.join(', ')}`, v) ?? def;
    return v as T;
  }

  url(name: string, def: string | undefined, protocols: readonly string[], description: string): string | undefined {
    const v = this.raw(name, def, description);
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) return this.fail(name, `a URL with scheme ${protocols.join(' or ')}`, v);
      return v;
    } catch {
      return this.fail(name, `a URL (${protocols.join(' or ')})`, v);
    }
  }

  list(name: string, def: string, description: string): string[] {
    const v = this.raw(name, def, description) ?? def;
    return v.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  }

  /**
   * Like list, but a variable set to the empty string is the empty list (unset gives the
   * default): for a list whose emptiness means something, such as "no slow retries".
   */
  listOrNone(name: string, def: string, description: string): string[] {
    const v = this.raw(name, def, description) ?? def;
    const chosen = this.env[name] === '' ? '' : v;
    return chosen.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  }

  check(name: string, ok: boolean, expected: string, got: string): void {
    if (!ok) this.fail(name, expected, got);
  }

  /** A problem that is not a malformed value (two variables that contradict each other, say). */
  refuse(name: string, why: string): void {
    this.problems.push(`${name}: ${why}`);
  }
}
