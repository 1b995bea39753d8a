/**
 * Every README walkthrough, run from the README's own text against the examples kit, the way a newcomer runs it: in
 * a copy of the clone (the files git knows, `node_modules` linked) where `npx tapedeck` runs the clone's own bin, by
 * bash, one block at a time, each in a folder of its own in that copy. A block must end with the exit code its
 * marker names (0 unless it says `exits N`), print every output the README shows for it (durations, timestamps,
 * ports and pids aside), and leave nothing running: the kit's servers stop with the shell that started them, and
 * tapedeck runs in wrapper mode.
 *
 * A walkthrough's folder holds what the text names by relative path (a copy of `examples/`, `dist` linked for the
 * kit's LLM, then the tapes and files it writes); npx and node find the clone above it, as from the clone's root.
 * The first `npx tapedeck` in a clone installs it into npm's npx cache, which runs its `prepare` (the build): done
 * once, before the walkthroughs, so that they share it (a clone per walkthrough paid it each time, ~14 s of CPU).
 *
 * The one change to the text: the kit's ports (8901, 8902, in the README and in examples/) become free ports, two
 * per walkthrough, so that walkthroughs run a few at a time (each is a chain of processes, mostly waiting on the
 * previous one) and beside another run of this test (or a kit someone left running).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingLines, walkthroughs, type Walkthrough } from './walkthroughs.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const ALL = walkthroughs(README);
/** The walkthroughs the README must keep (a block whose marker went missing would silently stop being tested). */
const EXPECTED = [
  'kit',
  'stdio',
  'side-effects',
  'modified-replay',
  'forks',
  'experiment',
  'compare',
  'ci',
  'ci-markdown',
  'drift',
  'inspect',
  'export',
];
/** Set to a folder to keep what each walkthrough printed there (NAME.txt), e.g. to update the README's outputs. */
const DUMP = process.env.WALKTHROUGH_DUMP;
/** How many walkthroughs run at once. */
const AT_ONCE = 2;
const NPX_CACHE = path.join(homedir(), '.npm/_npx');

let clone: string;

/** The ports handed out so far: two walkthroughs never share one, even one the system hands out again. */
const taken = new Set<number>();

async function freePort(): Promise<number> {
  const port = await new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  if (taken.has(port)) return freePort();
  taken.add(port);
  return port;
}

type Ports = [number, number];
const withPorts = (text: string, ports: Ports): string =>
  text.replace(/\b8901\b/g, String(ports[0])).replace(/\b8902\b/g, String(ports[1]));

function filesOf(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(path.join(dir, f)).isDirectory() ? filesOf(path.join(dir, f)) : [path.join(dir, f)]));
}

/** Whether anything still listens on `port` (a server the walkthrough left behind). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** The environment of a fresh shell: no npm or vitest variables, no tape folder set, the CA in `dir`. */
function shellEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|VITEST|TAPEDECK_|NODE_OPTIONS$|TSX)/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, TAPEDECK_CA_DIR: path.join(dir, '.ca'), NO_COLOR: '1', COLUMNS: '100' };
}

/** A walkthrough's own folder in the clone: `examples/` with its kit's ports, `dist` linked (the kit's LLM loads it). */
function folderFor(w: Walkthrough, ports: Ports): string {
  const dir = path.join(clone, `walkthrough-${w.name}`);
  cpSync(path.join(clone, 'examples'), path.join(dir, 'examples'), { recursive: true });
  for (const file of filesOf(path.join(dir, 'examples'))) writeFileSync(file, withPorts(readFileSync(file, 'utf8'), ports));
  symlinkSync(path.join(clone, 'dist'), path.join(dir, 'dist'), 'dir');
  return dir;
}

/** At most AT_ONCE walkthroughs at a time. */
let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(work: () => Promise<T>): Promise<T> {
  while (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

async function run(w: Walkthrough, ports: Ports): Promise<{ code: number | null; output: string }> {
  const dir = folderFor(w, ports);
  const child = spawn('bash', ['-c', `exec 2>&1\nset -eo pipefail\n${withPorts(w.script, ports)}`], {
    cwd: dir,
    env: shellEnv(dir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

describe('the README walkthroughs, against the examples kit', () => {
  beforeAll(() => {
    clone = mkdtempSync(path.join(tmpdir(), 'tapedeck-walkthrough-'));
    const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    for (const file of listed.stdout.split('\0').filter((f) => f !== '' && existsSync(path.join(ROOT, f)))) {
      mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
      cpSync(path.join(ROOT, file), path.join(clone, file));
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
    // The first npx in the clone (installing it into npx's cache, which builds it), before the walkthroughs share it.
    const first = spawnSync('npx', ['tapedeck', '--version'], { cwd: clone, encoding: 'utf8', env: shellEnv(clone) });
    expect(first.status, first.stderr).toBe(0);
    if (!existsSync(path.join(clone, 'dist/cli/main.js'))) {
      const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: clone, encoding: 'utf8', env: shellEnv(clone) });
      expect(build.status, build.stderr).toBe(0);
    }
  }, 180_000);
  afterAll(() => {
    if (!clone) return;
    rmSync(clone, { recursive: true, force: true });
    // npx's cache entry for this clone, which no later run can use (the next clone has another path).
    for (const entry of existsSync(NPX_CACHE) ? readdirSync(NPX_CACHE) : []) {
      const manifest = path.join(NPX_CACHE, entry, 'package.json');
      if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(path.basename(clone)))
        rmSync(path.join(NPX_CACHE, entry), { recursive: true, force: true });
    }
  });

  it('finds every walkthrough the README is meant to have', () => {
    expect(ALL.map((w) => w.name)).toEqual(expect.arrayContaining(EXPECTED));
    for (const w of ALL) expect(w.script, w.name).toMatch(/\S/);
  });

  it.concurrent.for(ALL.map((w) => [w.name, w] as const))(
    '%s: runs as written, prints what the README shows, leaves nothing running',
    // A hang guard: with AT_ONCE walkthroughs at a time, the last ones wait for a slot on a loaded machine.
    { timeout: 600_000 },
    async ([, w], { expect }) => {
      let ports: Ports = [0, 0];
      const { code, output } = await slot(async () => {
        ports = [await freePort(), await freePort()];
        return run(w, ports);
      });
      if (DUMP) writeFileSync(path.join(DUMP, `${w.name}.txt`), output);
      const where = `README line ${w.line}, walkthrough ${w.name}; it printed:\n${output}`;
      expect(code, where).toBe(w.exitCode);
      expect(output, where).not.toMatch(/^\s+at .*\(.*:\d+:\d+\)$/m); // no stack trace anywhere
      for (const shown of w.outputs) expect(missingLines(shown, output), where).toEqual([]);
      // The kit's servers went with the shell; tapedeck (wrapper mode) went with its agent.
      for (const port of ports) await expect.poll(() => listening(port), { timeout: 5000 }).toBe(false);
    },
  );
});
