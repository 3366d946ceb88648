/** The README's configuration table lists every variable the configuration reads. */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configDocs } from '../../src/kernel/config/config.js';
import { ROOT } from '../support/process.js';

describe('README', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  it('starts with the two commands', () => {
    const head = readme.split('\n').slice(0, 6).join('\n');
    expect(head).to.contain('make start');
    expect(head).to.contain('make test');
  });
  it('documents every configuration variable with its default', () => {
    const missing = configDocs().filter((d) => !readme.includes(`| \`${d.name}\` | \`${d.default}\` |`));
    expect(missing.map((d) => d.name), 'run `npx tributary config --write-readme`').to.deep.equal([]);
  });
});
