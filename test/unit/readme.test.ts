/**
 * The README and the docs stay true: the README is a short front door, the configuration
 * table lists every variable the configuration reads, and every link, `make` target,
 * `tributary` command and environment variable a document names exists in the code.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { configDocs } from '../../src/kernel/config/config.js';
import { EXTRA_COMMANDS } from '../../src/app/cli/extra-commands.js';
import { ROOT } from '../support/process.js';
import { documentedCommands, documentedLinks, documentedMakeTargets, documentedVariables } from './docs-references.js';

const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');

/** The documents a reader is sent to: the README, ARCHITECTURE, docs/ and the operators' and benchmarks' READMEs. */
const DOCS = ['README.md', 'ARCHITECTURE.md', 'infra/README.md', 'test/bench/README.md',
  ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Every file of the code a variable may be read in, as one text. */
function codeText(): string {
  const parts: string[] = [read('Makefile'), read('.ci/run')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const rel = `${dir}/${name}`;
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (/\.(ts|cjs|js|sh|yaml|conf|py)$/.test(name)) parts.push(read(rel));
    }
  };
  for (const dir of ['src', 'infra', 'commands', 'queries', 'projections', 'test']) walk(dir);
  return parts.join('\n');
}

describe('README and docs', () => {
  const readme = read('README.md');

  it('the README starts with the two commands and stays under 200 lines', () => {
    const head = readme.split('\n').slice(0, 6).join('\n');
    expect(head).to.contain('make start');
    expect(head).to.contain('make test');
    expect(readme.split('\n').length).to.be.below(200);
  });

  it('docs/configuration.md documents every configuration variable with its default', () => {
    const table = read('docs/configuration.md');
    const missing = configDocs().filter((d) => !table.includes(`| \`${d.name}\` | \`${d.default}\` |`));
    expect(missing.map((d) => d.name), 'run `npx tributary config --write-readme`').to.deep.equal([]);
  });

  for (const doc of DOCS) {
    describe(doc, () => {
      const text = read(doc);
      it('links only to files that exist', () => {
        const broken = documentedLinks(text).filter((l) => !existsSync(path.join(ROOT, path.dirname(doc), l)));
        expect(broken).to.deep.equal([]);
      });
      it('names only make targets the Makefile has', () => {
        const makefile = read('Makefile');
        const missing = documentedMakeTargets(text).filter((t) => !new RegExp(`^${t}:`, 'm').test(makefile));
        expect(missing).to.deep.equal([]);
      });
      it('names only tributary commands the CLI has', () => {
        const known = new Set(['serve', 'migrate', 'replay', 'status', 'config', ...Object.keys(EXTRA_COMMANDS)]);
        expect(documentedCommands(text).filter((c) => !known.has(c))).to.deep.equal([]);
      });
    });
  }

  it("ARCHITECTURE.md's picture names every area of commands/ and queries/", () => {
    const picture = read('ARCHITECTURE.md').split('## The flow of one event')[0]!.replace(/[│\s]+/g, ' ');
    const areas = ['commands', 'queries'].flatMap((top) => readdirSync(path.join(ROOT, top))
      .filter((name) => statSync(path.join(ROOT, top, name)).isDirectory()).map((name) => ({ top, name })));
    expect(areas.filter(({ name }) => !picture.includes(name)).map(({ top, name }) => `${top}/${name}`)).to.deep.equal([]);
  });

  it('every environment variable a document names is read somewhere in the code', () => {
    const code = codeText();
    const unread = DOCS.flatMap((doc) => documentedVariables(read(doc)).filter((v) => !code.includes(v)).map((v) => `${doc}: ${v}`));
    expect(unread).to.deep.equal([]);
  });
});
