/**
 * One CLI language across commands: the tape as an argument (or `--tape`), help with no command, did-you-mean for
 * commands and flags, old spellings kept with a notice, colour by one rule (a terminal, `NO_COLOR`, `FORCE_COLOR`)
 * on stdout and stderr alike, and detail lines wrapped rather than cut.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colourOn } from '../../src/inspect/format.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { llmCall, writeTape } from '../view/synthetic-tape.js';

const ESC = '\u001b[';
/** The text without its colour codes. */
const uncoloured = (text: string): string => text.replace(new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, 'g'), '');
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-cli-language-'));
  const long = 'sunny and warm all day in Lisbon with a light breeze from the sea';
  await writeTape(dir, 'run', [llmCall(0, { question: 'the weather in Lisbon?', answer: long }), llmCall(40)]);
  await writeTape(dir, 'other', [llmCall(0, { question: 'the weather in Lisbon?', answer: 'rain' }), llmCall(40)]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof runCliInProcess> =>
  runCliInProcess(
    args.map((a) => (a === '@dir' ? dir : a)),
    env,
  );

describe('help and did-you-mean', () => {
  it('tapedeck with no command prints the help and exits 0', async () => {
    const r = await cli([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('usage: tapedeck COMMAND');
    expect(r.stdout).toBe((await cli(['--help'])).stdout);
    expect(r.stderr).toBe('');
  });

  it('tapedeck help COMMAND is tapedeck COMMAND --help', async () => {
    const r = await cli(['help', 'show']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe((await cli(['show', '--help'])).stdout);
  });

  it('a misspelt command is answered with the closest one', async () => {
    const r = await cli(['recrod']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tapedeck: unknown command "recrod": did you mean record\? \(commands: record, replay, /);
    expect((await cli(['frobnicate'])).stderr).not.toContain('did you mean');
  });

  it('a flag with two letters swapped is answered with the flag (--tpae: --tape)', async () => {
    const r = await cli(['record', '--tpae', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tapedeck record: unknown flag --tpae: did you mean --tape\? \(record's flags: --tape, /);
    expect((await cli(['record', '--overwrit'])).stderr).toMatch(/did you mean --overwrite\?/);
  });
});

describe('the tape argument', () => {
  it('is an argument in every command, and --tape NAME says the same', async () => {
    for (const command of [['show'], ['cost'], ['export', '--format', 'har']]) {
      const given = await cli([...command, 'run', '--dir', '@dir']);
      expect(given.code, given.stderr).toBe(0);
      const flagged = await cli([...command, '--tape', 'run', '--dir', '@dir']);
      expect(flagged).toEqual(given);
      expect(await cli([...command, '-t', 'run', '--dir', '@dir'])).toEqual(given);
    }
  });

  it('two different tapes, or none, are one line and exit 2', async () => {
    const two = await cli(['show', 'run', '--tape', 'other', '--dir', '@dir']);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/^tapedeck show: two tapes given, "run" and --tape "other": name one \(tapedeck show NAME /);
    const none = await cli(['replay', '--dir', '@dir']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('tapedeck replay: a tape is required: tapedeck replay NAME [flags] [-- COMMAND ARGS...]\n');
    // The same name twice is one tape.
    expect((await cli(['show', 'run', '--tape', 'run', '--dir', '@dir'])).code).toBe(0);
  });
});

describe('old spellings', () => {
  it('diff --fail-on-divergence still gates, with a one-line notice on stderr; --fail-on divergence is its name now', async () => {
    const now = await cli(['diff', 'run', 'other', '--dir', '@dir', '--fail-on', 'divergence']);
    expect(now.code).toBe(1);
    const old = await cli(['diff', 'run', 'other', '--dir', '@dir', '--fail-on-divergence']);
    expect(old.code).toBe(1);
    expect(old.stdout).toBe(now.stdout);
    expect(old.stderr).toBe(
      'tapedeck diff: --fail-on-divergence is deprecated: use --fail-on divergence (the old spelling still works for now)\n' + now.stderr,
    );
    expect((await cli(['diff', 'run', 'run', '--dir', '@dir', '--fail-on', 'divergence'])).code).toBe(0);
    const bad = await cli(['diff', 'run', 'run', '--dir', '@dir', '--fail-on', 'breaking']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^tapedeck diff: --fail-on takes divergence for diff \(got "breaking"\)/);
  });

  it('replay --only-route is read as --live-route, with the notice; --help shows only the new name', async () => {
    const r = await cli(['replay', 'run', '--dir', '@dir', '--only-route', 'openai']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n').slice(0, 2)).toEqual([
      'tapedeck replay: --only-route is deprecated: use --live-route ROUTE (the old spelling still works for now)',
      // The value reached --live-route's own check.
      'tapedeck replay: --live-route needs a route prefix such as /openai (got "openai")',
    ]);
    const help = (await cli(['replay', '--help'])).stdout;
    expect(help).toContain('--live-route ROUTE');
    expect(help).not.toContain('--only-route');
  });
});

describe('colour: one rule for every command and both streams', () => {
  it('colourOn: a terminal, unless NO_COLOR; FORCE_COLOR over both (0 or false: off)', () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    const pipe = new PassThrough();
    expect(colourOn(tty, {})).toBe(true);
    expect(colourOn(pipe, {})).toBe(false);
    expect(colourOn(tty, { NO_COLOR: '1' })).toBe(false);
    expect(colourOn(tty, { NO_COLOR: '' })).toBe(true);
    expect(colourOn(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourOn(pipe, { FORCE_COLOR: '' })).toBe(true);
    expect(colourOn(tty, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
    expect(colourOn(tty, { FORCE_COLOR: '0' })).toBe(false);
    expect(colourOn(tty, { FORCE_COLOR: 'false' })).toBe(false);
  });

  it.for([
    ['list', '--dir', '@dir'],
    ['cost', 'run', '--dir', '@dir'],
    ['scan', '--dir', '@dir'],
    ['show', 'run', '--dir', '@dir'],
    ['diff', 'run', 'other', '--dir', '@dir'],
    ['--help'],
    ['show', '--help'],
  ])('tapedeck %s: coloured with FORCE_COLOR, plain on a pipe or with FORCE_COLOR=0', async (args) => {
    const forced = await cli(args, { FORCE_COLOR: '1' });
    expect(forced.stdout).toContain(ESC);
    const piped = await cli(args);
    expect(piped.stdout).not.toContain(ESC);
    expect(uncoloured(forced.stdout)).toBe(piped.stdout);
    expect((await cli(args, { FORCE_COLOR: '0' })).stdout).toBe(piped.stdout);
  });

  it("tapedeck's own lines on stderr: an error red, a deprecation yellow, the same words without colour", async () => {
    const forced = await cli(['diff', 'run', 'other', '--dir', '@dir', '--fail-on-divergence'], { FORCE_COLOR: '1' });
    const [notice, gate] = forced.stderr.split('\n');
    expect(notice?.startsWith(`${ESC}33mtapedeck diff: --fail-on-divergence is deprecated`)).toBe(true);
    expect(gate?.startsWith(`${ESC}31mtapedeck diff: other diverges from run at step 0: `)).toBe(true);
    const plain = await cli(['diff', 'run', 'other', '--dir', '@dir', '--fail-on-divergence'], { NO_COLOR: '1' });
    expect(plain.stderr).toBe(uncoloured(forced.stderr));
    expect((await cli(['recrod'], { FORCE_COLOR: '1' })).stderr.startsWith(`${ESC}31mtapedeck: unknown command`)).toBe(true);
  });
});

describe('detail lines are wrapped, never cut', () => {
  it("diff's first divergence says why in full at 50 columns", async () => {
    const r = await cli(['diff', 'run', 'other', '--dir', '@dir', '--width', '50']);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('first divergence'));
    const why = lines.slice(at + 1, lines.indexOf('', at));
    expect(why.length).toBeGreaterThan(1);
    for (const l of why) expect(l.length).toBeLessThanOrEqual(50);
    expect(why.map((l) => l.trim()).join(' ')).toBe(
      'different output: original "sunny and warm all day in Lisbon with a light breeze from the sea", replay "rain"',
    );
  });
});
