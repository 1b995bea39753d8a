/**
 * Every walkthrough of the documentation (README.md and docs/*.md), run from the page's own text against the examples
 * kit, the way a newcomer runs it: in a copy of the clone (the files git knows, `node_modules` linked) where `npx tapedeck` runs the clone's own bin, by
 * bash, one block at a time, each in a folder of its own in that copy. A block must end with the exit code its
 * marker names (0 unless it says `exits N`), print every output its page shows for it (durations, timestamps,
 * ports and pids aside), and leave nothing running: the kit's servers stop with the shell that started them, and
 * tapedeck runs in wrapper mode.
 *
 * The walkthroughs are split into groups (WALKTHROUGH_GROUPS), one test file each (`walkthroughs-GROUP.test.ts`), so
 * that they spread over the workers; all share the one copy of the clone built for the run (walkthrough-clone.ts).
 * A walkthrough's folder holds what the text names by relative path (a copy of `examples/`, `dist` linked for the
 * kit's LLM, then the tapes and files it writes); npx and node find the clone above it, as from the clone's root.
 *
 * The one change to the text: the kit's ports (8901, 8902, on the pages and in examples/) become free ports, two
 * per walkthrough, never the same two for two walkthroughs of the run (in any worker), so that walkthroughs run a few
 * at a time (each is a chain of processes, mostly waiting on the previous one) and beside another run of these
 * tests (or a kit someone left running).
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, inject, it } from 'vitest';
import { lockOf, shellEnv, walkthroughClone } from './walkthrough-clone.js';
import { needsPostgres, postgresPath } from './walkthrough-postgres.js';
import { missingLines, walkthroughs, type Walkthrough } from './walkthroughs.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Which test file runs which walkthrough (`walkthroughs-GROUP.test.ts`), balanced by their CPU (~12-27 s a group
 * alone). Every walkthrough of the documentation is in exactly one group (walkthrough-groups.test.ts checks it).
 */
export const WALKTHROUGH_GROUPS = {
  start: ['kit', 'stdio'],
  replay: ['side-effects', 'modified-replay'],
  forks: ['forks', 'experiment'],
  compare: ['compare', 'inspect'],
  ci: ['ci', 'ci-markdown'],
  more: ['drift', 'export'],
  store: ['shared-store', 'websocket'],
} as const satisfies Record<string, readonly string[]>;
export type WalkthroughGroup = keyof typeof WALKTHROUGH_GROUPS;

/** Set to a folder to keep what each walkthrough printed there (NAME.txt), e.g. to update the outputs the pages show. */
const DUMP = process.env.WALKTHROUGH_DUMP;
/** How many walkthroughs of a file run at once. */
const AT_ONCE = 2;

type Ports = [number, number];

/** A port free now that no other walkthrough of this run was given (the mark is an exclusive mkdir in the lock). */
async function freePort(clone: string): Promise<number> {
  const port = await new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  try {
    mkdirSync(path.join(lockOf(clone), `port-${port}`));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return freePort(clone);
    throw err;
  }
  return port;
}

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

/** The command lines of the processes that name `dir` (a walkthrough's folder) in theirs. */
function runningIn(dir: string): string[] {
  const ps = spawnSync('ps', ['-eo', 'args='], { encoding: 'utf8' });
  return ps.stdout.split('\n').filter((line) => line.includes(`${dir}/`) || line.endsWith(dir));
}

/** A walkthrough's own folder in the clone: `examples/` with its kit's ports, `dist` linked (the kit's LLM loads it). */
function folderFor(clone: string, w: Walkthrough, ports: Ports): string {
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

async function run(
  clone: string,
  w: Walkthrough,
  ports: Ports,
  pathFirst: string | undefined,
): Promise<{ code: number | null; output: string }> {
  const dir = folderFor(clone, w, ports);
  const env = shellEnv(dir);
  if (pathFirst !== undefined) env.PATH = `${pathFirst}${path.delimiter}${env.PATH ?? ''}`;
  const child = spawn('bash', ['-c', `exec 2>&1\nset -eo pipefail\n${withPorts(w.script, ports)}`], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

/** The pages walkthroughs may live on: README.md, then docs/*.md (relative to the clone's root). */
export function docPages(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** Every walkthrough of the documentation; a name is used once across all the pages. */
export function docWalkthroughs(): Walkthrough[] {
  const all = docPages().flatMap((file) => walkthroughs(readFileSync(path.join(ROOT, file), 'utf8'), file));
  const seen = new Map<string, Walkthrough>();
  for (const w of all) {
    const first = seen.get(w.name);
    if (first !== undefined)
      throw new Error(`${w.file} line ${w.line}: walkthrough ${w.name} is already on ${first.file} line ${first.line}`);
    seen.set(w.name, w);
  }
  return all;
}

/** The tests of one group's walkthroughs, in the run's shared clone. */
export function walkthroughTests(group: WalkthroughGroup): void {
  const names: readonly string[] = WALKTHROUGH_GROUPS[group];
  const mine = docWalkthroughs().filter((w) => names.includes(w.name));
  let clone: string;

  describe(`the walkthroughs of the documentation (${names.join(', ')}), against the examples kit`, () => {
    // A hang guard: the first file builds the clone (~15 s alone), the others wait for it.
    beforeAll(async () => void (clone = await walkthroughClone(inject('walkthroughClone'))), 360_000);

    it('finds the walkthroughs of this group in the documentation', ({ expect }) => {
      expect(mine.map((w) => w.name).sort()).toEqual([...names].sort());
      for (const w of mine) expect(w.script, w.name).toMatch(/\S/);
    });

    it.concurrent.for(mine.map((w) => [w.name, w] as const))(
      '%s: runs as written, prints what its page shows, leaves nothing running',
      // A hang guard: with AT_ONCE walkthroughs at a time, the last ones wait for a slot on a loaded machine.
      { timeout: 600_000 },
      async ([, w], { expect, skip }) => {
        let pathFirst: string | undefined;
        if (needsPostgres(w)) {
          pathFirst = postgresPath(lockOf(clone));
          if (pathFirst === undefined) {
            const why = `${w.name} needs the PostgreSQL server programs (initdb, pg_ctl): install the postgresql package`;
            if (process.env.CI === 'true') throw new Error(`CI=true and ${why}`);
            skip(why);
          }
        }
        let ports: Ports = [0, 0];
        const { code, output } = await slot(async () => {
          ports = [await freePort(clone), await freePort(clone)];
          return run(clone, w, ports, pathFirst);
        });
        if (DUMP) writeFileSync(path.join(DUMP, `${w.name}.txt`), output);
        const where = `${w.file} line ${w.line}, walkthrough ${w.name}; it printed:\n${output}`;
        expect(code, where).toBe(w.exitCode);
        expect(output, where).not.toMatch(/^\s+at .*\(.*:\d+:\d+\)$/m); // no stack trace anywhere
        for (const shown of w.outputs) expect(missingLines(shown, output), where).toEqual([]);
        // The kit's servers went with the shell; tapedeck (wrapper mode) went with its agent.
        for (const port of ports) await expect.poll(() => listening(port), { timeout: 5000 }).toBe(false);
        // Nor anything else it started there (a database cluster, a server of its own).
        await expect.poll(() => runningIn(path.join(clone, `walkthrough-${w.name}`)), { timeout: 5000 }).toEqual([]);
      },
    );
  });
}
