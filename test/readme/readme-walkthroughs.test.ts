/**
 * Every README walkthrough, run from the README's own text against the examples kit, the way a newcomer runs it: in
 * a copy of the clone (the files git knows, `node_modules` linked) built with `npm run build`, by bash, one block at
 * a time, each in a fresh tape folder. A block must end with the exit code its marker names (0 unless it says
 * `exits N`), print every output the README shows for it (durations, timestamps, ports and pids aside), and leave
 * nothing running: the kit's servers stop with the shell that started them, and tapedeck runs in wrapper mode.
 *
 * The one change to the text: the kit's ports (8901, 8902, in the README and in examples/) become free ports in the
 * copy, so that this test can run beside another run of itself (or a kit someone left running).
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
import { tmpdir } from 'node:os';
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

let clone: string;
let ports: [number, number];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const withPorts = (text: string): string => text.replace(/\b8901\b/g, String(ports[0])).replace(/\b8902\b/g, String(ports[1]));

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

/** The environment of a fresh shell: no npm or vitest variables, no tape folder set, the CA in the copy. */
function shellEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|VITEST|TAPEDECK_|NODE_OPTIONS$|TSX)/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, TAPEDECK_CA_DIR: path.join(clone, '.ca'), NO_COLOR: '1', COLUMNS: '100' };
}

async function run(w: Walkthrough): Promise<{ code: number | null; output: string }> {
  rmSync(path.join(clone, 'tapes'), { recursive: true, force: true });
  const child = spawn('bash', ['-c', `exec 2>&1\nset -eo pipefail\n${withPorts(w.script)}`], {
    cwd: clone,
    env: shellEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

describe('the README walkthroughs, against the examples kit', () => {
  beforeAll(async () => {
    ports = [await freePort(), await freePort()];
    clone = mkdtempSync(path.join(tmpdir(), 'tapedeck-walkthrough-'));
    const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    for (const file of listed.stdout.split('\0').filter((f) => f !== '' && existsSync(path.join(ROOT, f)))) {
      mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
      cpSync(path.join(ROOT, file), path.join(clone, file));
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
    for (const file of filesOf(path.join(clone, 'examples'))) writeFileSync(file, withPorts(readFileSync(file, 'utf8')));
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: clone, encoding: 'utf8', env: shellEnv() });
    expect(build.status, build.stderr).toBe(0);
  }, 180_000);
  afterAll(() => {
    if (clone) rmSync(clone, { recursive: true, force: true });
  });

  it('finds every walkthrough the README is meant to have', () => {
    expect(ALL.map((w) => w.name)).toEqual(expect.arrayContaining(EXPECTED));
    for (const w of ALL) expect(w.script, w.name).toMatch(/\S/);
  });

  it.each(ALL.map((w) => [w.name, w] as const))(
    '%s: runs as written, prints what the README shows, leaves nothing running',
    async (_name, w) => {
      const { code, output } = await run(w);
      if (DUMP) writeFileSync(path.join(DUMP, `${w.name}.txt`), output);
      const where = `README line ${w.line}, walkthrough ${w.name}; it printed:\n${output}`;
      expect(code, where).toBe(w.exitCode);
      expect(output, where).not.toMatch(/^\s+at .*\(.*:\d+:\d+\)$/m); // no stack trace anywhere
      for (const shown of w.outputs) expect(missingLines(shown, output), where).toEqual([]);
      // The kit's servers went with the shell; tapedeck (wrapper mode) went with its agent.
      for (const port of ports) await expect.poll(() => listening(port), { timeout: 5000 }).toBe(false);
    },
    240_000,
  );
});
