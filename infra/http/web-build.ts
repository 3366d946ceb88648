/**
 * `npm run build`'s last step: every page under web/ (a folder with a main.ts) bundled to
 * dist/web/<page>.js and dist/web/<page>.css, which a server run from dist/ then serves.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildPage, PREBUILT_DIR, WEB_ROOT } from './web-assets.js';

export function webPages(): string[] {
  return readdirSync(WEB_ROOT, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(WEB_ROOT, d.name, 'main.ts')))
    .map((d) => d.name)
    .sort();
}

async function main(): Promise<void> {
  mkdirSync(PREBUILT_DIR, { recursive: true });
  for (const page of webPages()) {
    const { js, css } = await buildPage(page);
    writeFileSync(path.join(PREBUILT_DIR, `${page}.js`), js);
    writeFileSync(path.join(PREBUILT_DIR, `${page}.css`), css);
    process.stdout.write(`web/${page}: ${js.length} B of script, ${gzipSync(js).length} B gzipped\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
