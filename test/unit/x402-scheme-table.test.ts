/**
 * Each Tributary scheme is one object in one table (commands/x402/schemes/): the generic
 * code reaches a scheme's terms, requirement, accepts entry, grace, allowance, transaction
 * checks, settlement, admission, usage report and the payer's policy_type through
 * `schemeOf(r)`, never by comparing a scheme's name. The standard wire's two upto fields
 * still pick by name: they are listed, so the list only shrinks.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SCHEMES } from '../../commands/x402/requirements.js';
import { schemeNamed } from '../../commands/x402/schemes/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const X402 = join(ROOT, 'commands', 'x402');

/** Files outside schemes/ that still compare a Tributary scheme by name, and why. */
const PICKS_BY_NAME: readonly string[] = [
  'commands/x402/plugins/server.ts', // the x402 package's server plugin options
  'commands/x402/standard/requirements.ts', // the standard wire's upto field
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const BY_NAME = new RegExp(`scheme\\s*[!=]==\\s*'(${SCHEMES.map((s) => s.replace(/[/.]/g, '\\$&')).join('|')})'`);

describe('x402 scheme table', () => {
  it('has one engine per scheme, each naming its own scheme', () => {
    for (const s of SCHEMES) expect(schemeNamed(s).scheme).to.equal(s);
  });

  it('leaves no comparison of a scheme name outside schemes/ but the listed payer-side files', () => {
    const offenders = tsFiles(X402)
      .filter((f) => !f.startsWith(join(X402, 'schemes')))
      .filter((f) => BY_NAME.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f))
      .sort();
    expect(offenders).to.deep.equal([...PICKS_BY_NAME].sort());
  });

  it('finds a comparison by name where there is one', () => {
    expect(BY_NAME.test("if (r.scheme === 'x402://upto') return;")).to.equal(true);
    expect(BY_NAME.test("if (r.scheme !== 'deferred') return;")).to.equal(true);
    expect(BY_NAME.test("if (scheme === 'exact') return;")).to.equal(false);
  });
});
