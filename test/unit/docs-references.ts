/**
 * What a Markdown document refers to: relative links, `make` targets, `tributary`
 * commands and environment variables. The docs test checks each against the code.
 */

/** Relative link targets (no scheme, no bare anchor), without their #anchor. */
export function documentedLinks(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1] ?? '';
    if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
    out.add(target.split('#')[0] ?? target);
  }
  return [...out];
}

/** Targets of `make <target>` in code spans and code blocks. */
export function documentedMakeTargets(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:^\s*|`|\$ |&& )make ([a-z][a-z-]*)(?=[\s`]|$)/gm)) out.add(m[1] ?? '');
  return [...out].filter((t) => t !== '');
}

/** Commands of `tributary <command>` (with or without npx), where a command follows. */
export function documentedCommands(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:npx |`)tributary ([a-z][a-z-]*)/g)) out.add(m[1] ?? '');
  return [...out].filter((c) => c !== '');
}

/** Names in code spans that look like environment variables: upper case with an underscore (`SOLANA_RPC_URL`). */
export function documentedVariables(text: string): string[] {
  const out = new Set<string>();
  for (const span of text.matchAll(/`([^`\n]+)`/g)) {
    for (const m of (span[1] ?? '').matchAll(/(?<![A-Za-z0-9_$.{])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![A-Za-z0-9_(])/g)) out.add(m[1] ?? '');
  }
  return [...out].filter((v) => v !== '');
}
