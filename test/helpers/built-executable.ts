/**
 * tapedeck's single executable (scripts/build-exe.ts) for the tests that run it (test/release/), built once per
 * source: cached in TMPDIR/tapedeck-exe-cache/HASH/, HASH over what goes into it (src/, config/, package.json and the
 * lockfile, the build script, this Node). The test files that need it share one build, in one run and across runs
 * (a rerun of an unchanged checkout builds nothing); a lock file makes the second wait for the first. Older builds
 * (another checkout's, an older source's) are removed once unused for a day.
 *
 * Where it cannot be built (no postject in node_modules, a Node without the single-executable fuse: a distribution's
 * own build), `builtExecutable` says why, and the tests skip with that reason; under CI=true they must run.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cannotBuildWith } from '../../scripts/build-exe.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CACHE = path.join(tmpdir(), 'tapedeck-exe-cache');
const DAY_MS = 24 * 60 * 60 * 1000;

export type Built = { ok: true; file: string; bytes: number; sha256: string } | { ok: false; reason: string };

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** The hash of everything the executable is made of. */
export function sourceHash(): string {
  const h = createHash('sha256');
  const inputs = [
    ...files(path.join(ROOT, 'src')),
    ...files(path.join(ROOT, 'config')),
    ...['package.json', 'package-lock.json', 'scripts/build-exe.ts'].map((f) => path.join(ROOT, f)),
  ];
  for (const f of inputs) h.update(path.relative(ROOT, f)).update('\0').update(readFileSync(f)).update('\0');
  h.update(process.execPath)
    .update(process.version)
    .update(String(statSync(process.execPath).size));
  return h.digest('hex').slice(0, 16);
}

/** Why the executable cannot be built here, or null. */
export function cannotBuild(): string | null {
  if (!existsSync(path.join(ROOT, 'node_modules/postject'))) return 'postject is not installed (npm ci installs it)';
  return cannotBuildWith();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Take the lock file (or wait for its holder, or take it over from a holder that is gone). */
async function lock(file: string): Promise<() => void> {
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8') || '0');
      if (holder !== 0 && !alive(holder)) rmSync(file, { force: true });
      else await sleep(500);
    }
  }
}

function removeOld(keep: string): void {
  for (const dir of existsSync(CACHE) ? readdirSync(CACHE) : []) {
    const full = path.join(CACHE, dir);
    if (dir !== keep && Date.now() - statSync(full).mtimeMs > DAY_MS) rmSync(full, { recursive: true, force: true });
  }
}

/** The executable for this source: from the cache, or built now (once, whichever test file asks first). */
export async function builtExecutable(): Promise<Built> {
  const why = cannotBuild();
  if (why !== null) {
    if (process.env.CI === 'true') throw new Error(`CI=true and the single executable cannot be built: ${why}`);
    return { ok: false, reason: why };
  }
  const hash = sourceHash();
  const dir = path.join(CACHE, hash);
  mkdirSync(CACHE, { recursive: true });
  const unlock = await lock(path.join(CACHE, `${hash}.lock`));
  try {
    const done = path.join(dir, 'built.json');
    if (!existsSync(done)) {
      rmSync(dir, { recursive: true, force: true });
      // In a process of its own: what the build prints (postject's warnings) is shown only when it fails.
      const build = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/build-exe.ts'), '--out', dir, '--json'], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      if (build.status !== 0) throw new Error(`npm run build:exe failed (${build.status}):\n${build.stdout}\n${build.stderr}`);
      writeFileSync(done, build.stdout.trim().split('\n').at(-1)!);
      removeOld(hash);
    }
    utimesSync(dir, new Date(), new Date());
    return { ok: true, ...(JSON.parse(readFileSync(done, 'utf8')) as { file: string; bytes: number; sha256: string }) };
  } finally {
    unlock();
  }
}
