/**
 * The browser pages (web/<page>/): each page's HTML, and its script and stylesheet bundled
 * by esbuild from web/<page>/main.ts (which imports its CSS). Run from dist/, a page's
 * prebuilt bundle (dist/web/<page>.js and .css, written by `npm run build`) is served when
 * present; otherwise, and always from source, the bundle is built in memory once per
 * process, on the first request. Everything comes from this origin: no inline script, no CDN.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import type { Api } from './routes.js';

/**
 * The pages' policy. connect-src is 'self' alone: CSP3's 'self' covers this origin's ws:
 * and wss: too (the dashboard's Socket.IO connects to its own origin), and a scheme source
 * such as `wss:` would let an injected script send what it reads to any host.
 */
export const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface PageBundle { js: string; css: string }

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FROM_DIST = HERE.split(path.sep).includes('dist');

function findRoot(): string {
  for (let dir = HERE; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'web', 'shared'))) return dir;
    if (path.dirname(dir) === dir) throw new Error('no web/ folder above ' + HERE);
  }
}

export const WEB_ROOT = path.join(findRoot(), 'web');
export const PREBUILT_DIR = path.join(path.dirname(WEB_ROOT), 'dist', 'web');

/** Bundles web/<page>/main.ts: minified, no source map, ES2020, one script and one stylesheet. */
export async function buildPage(page: string): Promise<PageBundle> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(WEB_ROOT, page, 'main.ts')],
    bundle: true, minify: true, sourcemap: false, target: 'es2020', format: 'iife', platform: 'browser',
    write: false, outdir: path.join(PREBUILT_DIR, page), entryNames: 'app', legalComments: 'none', logLevel: 'silent',
    tsconfig: path.join(WEB_ROOT, 'tsconfig.json'),
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js) throw new Error(`web/${page}: esbuild wrote no script`);
  return { js: js.text, css: css?.text ?? '' };
}

async function prebuilt(page: string): Promise<PageBundle | undefined> {
  if (!FROM_DIST) return undefined;
  const js = path.join(PREBUILT_DIR, `${page}.js`);
  if (!existsSync(js)) return undefined;
  return { js: await readFile(js, 'utf8'), css: await readFile(path.join(PREBUILT_DIR, `${page}.css`), 'utf8').catch(() => '') };
}

const bundles = new Map<string, Promise<PageBundle>>();

/** The page's bundle, prebuilt or built on first use; a failed build is retried on the next request. */
export function pageBundle(page: string): Promise<PageBundle> {
  let pending = bundles.get(page);
  if (!pending) {
    pending = prebuilt(page).then((b) => b ?? buildPage(page));
    pending.catch(() => bundles.delete(page));
    bundles.set(page, pending);
  }
  return pending;
}

const htmls = new Map<string, string>();

/** web/<page>/index.html, read once. */
export function pageHtml(page: string): string {
  let html = htmls.get(page);
  if (html === undefined) {
    html = readFileSync(path.join(WEB_ROOT, page, 'index.html'), 'utf8');
    htmls.set(page, html);
  }
  return html;
}

export interface WebPage {
  /** the folder under web/ */
  page: string;
  /** where the HTML is served, e.g. /checkout/:id */
  path: string;
  summary: string;
  tags: string[];
  params?: JsonSchema;
  query?: JsonSchema;
}

const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} };
const headers = (maxAge: number) => ({ 'Cache-Control': `public, max-age=${maxAge}`, 'Content-Security-Policy': PAGE_CSP, 'X-Content-Type-Options': 'nosniff' });

/**
 * GET the page's script at /<page>/app.js, its stylesheet at /<page>/app.css, and its HTML at
 * def.path (declared last: a path such as /checkout/:id would match the assets too).
 */
export function registerWebPage(api: Api, def: WebPage): void {
  const asset = (file: string, summary: string, contentType: string, pick: (b: PageBundle) => string) => api.route({
    method: 'get', path: `/${def.page}/${file}`, summary, tags: def.tags, query: NO_QUERY,
    responses: { 200: { description: summary, contentType } },
    handler: async () => ({ body: pick(await pageBundle(def.page)), contentType, headers: headers(300) }),
  });
  asset('app.css', `The ${def.page}'s stylesheet`, 'text/css; charset=utf-8', (b) => b.css);
  asset('app.js', `The ${def.page}'s script`, 'text/javascript; charset=utf-8', (b) => b.js);
  const html = 'text/html; charset=utf-8';
  api.route({
    method: 'get', path: def.path, summary: def.summary, tags: def.tags, query: def.query ?? NO_QUERY,
    ...(def.params ? { params: def.params } : {}),
    responses: { 200: { description: def.summary, contentType: html } },
    handler: () => Promise.resolve({ body: pageHtml(def.page), contentType: html, headers: headers(0) }),
  });
}
