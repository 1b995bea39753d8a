/**
 * The one copy of the clone the documentation walkthroughs run in, built once per test run however many walkthrough files
 * (and workers) ask for it: the files git knows, `node_modules` as installed (hard links), then the first `npx tapedeck`, which installs
 * the clone into npm's npx cache and so runs its `prepare` (the build). Its path comes from the global setup
 * (`inject('walkthroughClone')`, unique to the run); the first file to ask builds it under a lock (an exclusive
 * `mkdir`), the others wait for the lock's `ready` (or `failed`) mark. The global teardown removes it
 * (`removeWalkthroughClone`), with its npx cache entry, which no later run can use (the next clone has another path).
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NPX_CACHE = path.join(homedir(), '.npm/_npx');
/** How long a file waits for the clone another file is building (a hang guard: the build takes ~15 s alone). */
const WAIT_MS = 300_000;

/** The environment of a fresh shell: no npm or vitest variables, no tape folder set, the CA in `dir`. */
export function shellEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|VITEST|TAPEDECK_|NODE_OPTIONS$|TSX|FORCE_COLOR$)/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, TAPEDECK_CA_DIR: path.join(dir, '.ca'), NO_COLOR: '1', COLUMNS: '100' };
}

/** Where the build's lock and its marks live (beside the clone, so that the clone holds only what git knows). */
export const lockOf = (clone: string): string => `${clone}.lock`;

/**
 * `dest` as a copy of the installed `node_modules` whose files are hard links (a clone after `npm ci`, in a fraction
 * of a second and no disk), npm's record of the tree (`.package-lock.json`) written last as a real file: so npm
 * trusts it, as in a fresh install, instead of reading every package on each `npx` (~0.3 s of CPU a call; the
 * worktree's own record is out of date once vitest writes its cache there). Returns false where hard links cannot
 * be made (another file system): the caller links the folder instead.
 */
function linkInstalledTree(src: string, dest: string): boolean {
  const walk = (from: string, to: string): void => {
    mkdirSync(to);
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const a = path.join(from, entry.name);
      const b = path.join(to, entry.name);
      if (from === src && entry.name.startsWith('.vite')) continue; // vitest's caches, not the install
      if (entry.isSymbolicLink()) symlinkSync(readlinkSync(a), b);
      else if (entry.isDirectory()) walk(a, b);
      else if (from !== src || entry.name !== RECORD) linkSync(a, b);
    }
  };
  try {
    walk(src, dest);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    rmSync(dest, { recursive: true, force: true });
    return false;
  }
  if (existsSync(path.join(src, RECORD))) copyFileSync(path.join(src, RECORD), path.join(dest, RECORD));
  return true;
}
const RECORD = '.package-lock.json';

function build(clone: string): void {
  mkdirSync(clone);
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter((f) => f !== '' && existsSync(path.join(ROOT, f)))) {
    mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(clone, file));
  }
  if (!linkInstalledTree(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules')))
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  // The first npx in the clone (installing it into npx's cache, which builds it), before the walkthroughs share it.
  const first = spawnSync('npx', ['tapedeck', '--version'], { cwd: clone, encoding: 'utf8', env: shellEnv(clone) });
  if (first.status !== 0) throw new Error(`the first npx tapedeck --version in the clone exited ${first.status}: ${first.stderr}`);
  if (!existsSync(path.join(clone, 'dist/cli/main.js'))) {
    const built = spawnSync('npm', ['run', 'build', '--silent'], { cwd: clone, encoding: 'utf8', env: shellEnv(clone) });
    if (built.status !== 0) throw new Error(`npm run build in the clone exited ${built.status}: ${built.stderr}`);
  }
}

async function waitForBuild(clone: string): Promise<void> {
  const lock = lockOf(clone);
  for (const start = Date.now(); Date.now() - start < WAIT_MS; await sleep(250)) {
    if (existsSync(path.join(lock, 'ready'))) return;
    if (existsSync(path.join(lock, 'failed')))
      throw new Error(`building the walkthrough clone failed: ${readFileSync(path.join(lock, 'failed'), 'utf8')}`);
  }
  throw new Error(`the walkthrough clone ${clone} was not ready after ${WAIT_MS / 1000} s`);
}

/**
 * The run's clone, built by whichever caller comes first (in any worker); resolves to its path once it is built.
 * The build is synchronous, so no caller in the same process can see the lock before the build ends.
 */
export async function walkthroughClone(clone: string): Promise<string> {
  if (existsSync(path.join(lockOf(clone), 'ready'))) return clone;
  try {
    mkdirSync(lockOf(clone));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await waitForBuild(clone);
    return clone;
  }
  try {
    build(clone);
  } catch (err) {
    writeFileSync(path.join(lockOf(clone), 'failed'), (err as Error).message);
    throw err;
  }
  writeFileSync(path.join(lockOf(clone), 'ready'), '');
  return clone;
}

/** Remove the clone, its lock and its npx cache entry (nothing when no walkthrough ran). */
export function removeWalkthroughClone(clone: string): void {
  rmSync(clone, { recursive: true, force: true });
  rmSync(lockOf(clone), { recursive: true, force: true });
  for (const entry of existsSync(NPX_CACHE) ? readdirSync(NPX_CACHE) : []) {
    const manifest = path.join(NPX_CACHE, entry, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(path.basename(clone)))
      rmSync(path.join(NPX_CACHE, entry), { recursive: true, force: true });
  }
}
