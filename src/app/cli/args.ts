/** A small argument parser: positionals, `--flag value`, `--flag=value`, repeated flags. */
export interface ParsedArgs { positionals: string[]; flags: Map<string, string[]> }

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i]!;
    if (!a.startsWith('--')) { positionals.push(a); continue; }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq === -1 ? undefined : eq);
    let value = eq === -1 ? undefined : a.slice(eq + 1);
    if (value === undefined) {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('--')) { value = next; i += 1; } else value = 'true';
    }
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { positionals, flags };
}

export function flagValues(args: ParsedArgs, name: string): string[] {
  return (args.flags.get(name) ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}
