/**
 * The answers' wire types (src/kernel/wire/answers/), which the browser pages import beside
 * the server, are shapes alone: each file compiles to no code, so importing one puts
 * nothing of the server into a page's bundle (.dependency-cruiser.cjs keeps their imports
 * inside the folder).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { transformSync } from 'esbuild';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/kernel/wire/answers');

/** What a file is once its types are gone, as esbuild compiles it for a page. */
function codeOf(source: string): string {
  return transformSync(source, { loader: 'ts', format: 'esm', legalComments: 'none' }).code.trim();
}

describe('wire answers: types only', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));

  it('holds the answers the pages read', () => {
    expect(files).to.include.members(['checkout.ts', 'envelope.ts', 'merchant.ts', 'payer.ts']);
  });

  for (const file of files) {
    it(`${file} compiles to no code`, () => {
      expect(codeOf(readFileSync(path.join(DIR, file), 'utf8')), file).to.equal('');
    });
  }

  it('would see a value that slipped in', () => {
    expect(codeOf('export interface A { a: string }\nexport const LIMIT = 3;')).to.not.equal('');
  });
});
