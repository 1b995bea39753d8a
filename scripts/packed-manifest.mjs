// The package.json that goes into the packed package (`npm pack`, `npm publish`) has no `prepare` script.
//
// In the repository `prepare` is the build: `npm ci` and the first `npx tapedeck` in a clone run it, so `dist/` is
// there. In the packed package it would be an install script (npm 11 flags `prepare` of a tarball or git install,
// and would run a build that has neither the sources nor TypeScript): the package ships `dist/` built already.
// npm packs the package.json on disk as it is after `prepack`, so `prepack` builds and then runs `strip` (package.json
// without `prepare`, the repository's own kept aside), and `postpack` runs `restore`. A pack that failed between
// the two leaves the stripped file and the kept one (git status shows both): the next pack's `postpack`, or
// `node scripts/packed-manifest.mjs restore`, puts the repository's back; a `strip` meanwhile leaves them be.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const MANIFEST = path.join(ROOT, 'package.json');
/** The repository's package.json while a pack runs. */
const KEPT = path.join(ROOT, '.package.json.repo');

/**
 * The scripts left out: `prepare`, and `prepack` / `postpack` (they run this file, which is not in the package; npm
 * runs `postpack` from the manifest it read before `prepack`, so leaving it out of the file does not skip it).
 */
const PACK_ONLY = ['prepare', 'prepack', 'postpack'];

/** Replace `file` in one step (a reader never sees it half written). */
function replace(file, text) {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

function restore() {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST);
}

function strip() {
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  const scripts = manifest.scripts ?? {};
  if (!PACK_ONLY.some((name) => name in scripts)) return;
  for (const name of PACK_ONLY) delete scripts[name];
  replace(KEPT, text);
  replace(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}

const command = process.argv[2];
if (command === 'strip') strip();
else if (command === 'restore') restore();
else {
  console.error('usage: node scripts/packed-manifest.mjs strip|restore');
  process.exit(2);
}
