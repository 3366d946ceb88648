/**
 * Every browser page under web/ (each folder with a main.ts) bundles with esbuild, loads its script and stylesheet
 * from this origin only (no inline script, no inline handler, no CDN), and stays inside
 * the size budget: under 150 KB of JavaScript gzipped.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { buildPage, PAGE_CSP, WEB_ROOT } from '../../infra/http/web-assets.js';
import { webPages } from '../../infra/http/web-build.js';

const BUDGET = 150 * 1024;

describe('web pages: bundles, no inline script, size budget', function () {
  this.timeout(60_000);

  it('finds the pages', () => {
    expect(webPages()).to.include.members(['dashboard', 'checkout']);
  });

  for (const page of webPages()) {
    it(`${page}: bundles, its HTML loads scripts from this origin only, and its script is < 150 KB gzipped`, async () => {
      const { js, css } = await buildPage(page);
      expect(js.length).to.be.greaterThan(1000);
      expect(css).to.include(':focus-visible');
      const gz = gzipSync(js).length;
      expect(gz, `${page}: ${gz} B gzipped`).to.be.below(BUDGET);

      const html = readFileSync(path.join(WEB_ROOT, page, 'index.html'), 'utf8');
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      expect(scripts.length).to.be.greaterThan(0);
      for (const [, attrs, body] of scripts) {
        expect(body!.trim(), 'no inline script').to.equal('');
        expect(attrs).to.match(new RegExp(`src="/${page}/[a-z.]+\\.js"`));
      }
      expect(html, 'no inline event handler').not.to.match(/\son[a-z]+\s*=/i);
      expect(html, 'no inline style').not.to.match(/<style|\sstyle=/i);
      expect(html, 'nothing from another origin').not.to.match(/(src|href)="(https?:)?\/\//i);
      expect(html).to.include(`href="/${page}/app.css"`);
    });
  }

  it('the pages\' policy allows scripts from this origin alone', () => {
    expect(PAGE_CSP).to.include("script-src 'self';");
    expect(PAGE_CSP).not.to.match(/unsafe-inline|unsafe-eval|https?:/);
  });
});
