/**
 * The CLI in-process (src/cli/run-cli.ts, through test/helpers/cli-in-process.ts, which many tests use instead of a
 * process) prints and exits exactly as the `tapedeck` process does: help, version, an unknown command, a bad flag,
 * a library error with its hint, and a command's own output.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { llmCall, writeTape } from '../view/synthetic-tape.js';

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-run-cli-'));
  await writeTape(dir, 'run', [llmCall(0, { question: 'the weather in Lisbon?', answer: 'sunny' }), llmCall(40, { events: 3 })]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the CLI in-process', () => {
  it.for(
    [
      [],
      ['recrod'],
      ['--help'],
      ['--version'],
      ['frobnicate'],
      ['show', 'run', '--debreif'],
      ['show', 'nope', '--dir', '@dir'],
      ['diff', 'run', 'run', '--dir', '@dir', '--min-score', '2'],
      ['list', '--dir', '@dir', '--json'],
      ['show', 'run', '--dir', '@dir'],
    ].map((args) => [args.join(' '), args] as const),
  )('tapedeck %s: the same exit code, stdout and stderr as the process', async ([, args]) => {
    const argv = args.map((a) => (a === '@dir' ? dir : a));
    const proc = await runCli(argv);
    const own = await runCliInProcess(argv);
    expect({ code: own.code, stdout: own.stdout, stderr: own.stderr }).toEqual({
      code: proc.code,
      stdout: proc.stdout,
      stderr: proc.stderr,
    });
  });
});
