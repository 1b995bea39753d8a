/**
 * scripts/packed-manifest.mjs, the `prepack` / `postpack` pair that keeps `prepare` out of the packed package.json,
 * on a package of its own: the repository's file comes back byte for byte, also after a pack that failed between
 * the two (its `postpack` never ran). The whole pack is test/packaging.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../scripts/packed-manifest.mjs');
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A package whose scripts/ holds a copy of the script; `run(step)` runs it there. */
function fixture(manifest: object): { file: string; text: string; run: (step: string) => number | null } {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-packed-manifest-'));
  mkdirSync(path.join(dir, 'scripts'));
  copyFileSync(SCRIPT, path.join(dir, 'scripts/packed-manifest.mjs'));
  // Not as JSON.stringify would write it: the restored file must be the original bytes, not a reformatting.
  const text = JSON.stringify(manifest, null, 4).replace('{', '{ ');
  writeFileSync(path.join(dir, 'package.json'), text);
  const script = path.join(dir, 'scripts/packed-manifest.mjs');
  return {
    file: path.join(dir, 'package.json'),
    text,
    run: (step) => spawnSync(process.execPath, [script, step], { stdio: 'ignore' }).status,
  };
}

const scripts = {
  build: 'tsc',
  prepare: 'npm run build',
  prepack: 'npm run build && node scripts/packed-manifest.mjs strip',
  postpack: 'x',
};

it('strip leaves prepare, prepack and postpack out; restore puts the file back as it was', () => {
  const pkg = fixture({ name: 'p', version: '1.0.0', scripts });
  expect(pkg.run('strip')).toBe(0);
  const packed = JSON.parse(readFileSync(pkg.file, 'utf8')) as { scripts: Record<string, string> };
  expect(packed.scripts).toEqual({ build: 'tsc' });
  expect(pkg.run('restore')).toBe(0);
  expect(readFileSync(pkg.file, 'utf8')).toBe(pkg.text);
  expect(existsSync(path.join(dir as string, '.package.json.repo'))).toBe(false);
});

it("after a pack that failed between strip and restore, the next pack's strip keeps the repository's file", () => {
  const pkg = fixture({ name: 'p', version: '1.0.0', scripts });
  expect(pkg.run('strip')).toBe(0);
  // The pack failed: postpack never ran. The next pack strips again, and must not keep the stripped file.
  expect(pkg.run('strip')).toBe(0);
  expect(JSON.parse(readFileSync(pkg.file, 'utf8'))).toMatchObject({ scripts: { build: 'tsc' } });
  expect(readFileSync(path.join(dir as string, '.package.json.repo'), 'utf8')).toBe(pkg.text);
  expect(pkg.run('restore')).toBe(0);
  expect(readFileSync(pkg.file, 'utf8')).toBe(pkg.text);
  // restore with nothing kept, and strip of a package without those scripts, change nothing.
  expect(pkg.run('restore')).toBe(0);
  expect(readFileSync(pkg.file, 'utf8')).toBe(pkg.text);
});

it('refuses an unknown step (exit 2)', () => {
  const pkg = fixture({ name: 'p', version: '1.0.0' });
  expect(pkg.run('publish')).toBe(2);
  expect(pkg.run('strip')).toBe(0);
  expect(readFileSync(pkg.file, 'utf8')).toBe(pkg.text);
});
