#!/usr/bin/env node
// Builds the dashboard (web/src) into dist/web: one minified ES module bundle and one stylesheet,
// named by content hash under dist/web/assets, plus an index.html that loads them. The service
// serves that directory at / (src/dashboard). Usage: node scripts/build-web.mjs [--out DIR] [--sourcemap]
// Source maps are left out unless asked for (--sourcemap, for debugging a local build): a served
// map would publish the whole source to anyone who can reach the sign-in page.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { FAVICON_SVG, faviconIco } from './favicon.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--out');
const outDir = path.resolve(outArg > 0 ? process.argv[outArg + 1] : path.join(root, 'dist', 'web'));
const assetsDir = path.join(outDir, 'assets');
const sourcemap = process.argv.includes('--sourcemap') ? 'linked' : false;

const started = Date.now();
fs.mkdirSync(assetsDir, { recursive: true });

// Every file is written whole under a temporary name and renamed into place, and the directory is
// never emptied first: a build running beside another (each browser test builds before it starts)
// or beside a serving process never lets a reader see a missing or half-written asset. Names carry
// the content hash, so files of an older build are removed only after the new ones are in place.
function writeAtomically(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, contents);
  fs.renameSync(temporary, file);
}

const result = await esbuild.build({
  entryPoints: [path.join(root, 'web', 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  sourcemap,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: assetsDir,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  write: false,
  legalComments: 'linked',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});

for (const file of result.outputFiles) writeAtomically(file.path, file.contents);
const outputs = result.outputFiles.map((file) => path.relative(assetsDir, file.path));
const script = outputs.find((file) => file.endsWith('.js'));
const style = outputs.find((file) => file.endsWith('.css'));
if (!script) throw new Error('esbuild produced no script');

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Lookout</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="icon" href="/favicon.ico" sizes="32x32">
${style ? `<link rel="stylesheet" href="/assets/${style}">\n` : ''}<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Lookout dashboard needs JavaScript. The REST API is at /api.</noscript>
</body>
</html>
`;
writeAtomically(path.join(outDir, 'index.html'), html);
writeAtomically(path.join(outDir, 'favicon.svg'), FAVICON_SVG);
writeAtomically(path.join(outDir, 'favicon.ico'), faviconIco());
for (const file of fs.readdirSync(assetsDir)) {
  if (!outputs.includes(file) && !file.endsWith('.tmp')) fs.rmSync(path.join(assetsDir, file), { force: true });
}

const sizes = outputs
  .filter((file) => !file.endsWith('.map') && !file.endsWith('.txt'))
  .map((file) => {
    const bytes = fs.readFileSync(path.join(assetsDir, file));
    return `${file} ${(bytes.length / 1024).toFixed(1)} KiB (${(zlib.gzipSync(bytes).length / 1024).toFixed(1)} KiB gzipped)`;
  });
console.log(`dashboard built into ${path.relative(root, outDir) || outDir} in ${Date.now() - started} ms: ${sizes.join(', ')}`);
