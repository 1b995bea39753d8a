import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { explainFlagError } from '../../../src/cli/shared/flag-errors.js';
import { experimentCommand } from '../../../src/cli/experiment.js';
import { listCommand } from '../../../src/cli/list.js';
import { pruneCommand } from '../../../src/cli/prune.js';
import { showCommand } from '../../../src/cli/show.js';
import type { Command } from '../../../src/cli/shared/command.js';
import { runCli } from '../../helpers/cli.js';

/** Every flag of a command as the message lists them. */
const flags = (command: Command): string => [...Object.keys(command.options).map((f) => `--${f}`), '--help'].join(', ');

/** What main.ts prints for these arguments (parseArgs as main.ts calls it). */
function refused(command: Command, args: string[]): string {
  try {
    parseArgs({ args, options: command.options, strict: true, allowPositionals: command.allowPositionals ?? false });
  } catch (err) {
    return explainFlagError(command, err);
  }
  throw new Error(`parseArgs took ${args.join(' ')}`);
}

describe('a flag the command does not have', () => {
  it("names the closest flag and lists the command's flags, without node's advice about --", () => {
    const line = refused(showCommand, ['run', '--debreif']);
    expect(line).toBe(`unknown flag --debreif: did you mean --debrief? (show's flags: ${flags(showCommand)})`);
    expect(flags(showCommand)).toMatch(/^--dir, .*--json, --step, --errors, --debrief, --width, --wide, --help$/);
    expect(line).not.toContain("'--'");
  });

  it('suggests nothing when nothing is close, and still lists the flags', () => {
    expect(refused(listCommand, ['--frobnicate'])).toBe(`unknown flag --frobnicate (list's flags: ${flags(listCommand)})`);
  });

  it('catches a prefix and a flag of another command spelt near one of this one', () => {
    expect(refused(experimentCommand, ['--tape', 't', '--models', 'a'])).toMatch(
      /^unknown flag --models: did you mean --model\? \(experiment's flags: --tape/,
    );
    expect(refused(showCommand, ['run', '--wid', '80'])).toMatch(/^unknown flag --wid: did you mean --width\?/);
  });

  it('says which flag lacks a value, or takes none', () => {
    expect(refused(showCommand, ['run', '--step'])).toBe('--step needs a value');
    expect(refused(showCommand, ['run', '--json=yes'])).toBe('--json takes no value');
    expect(refused(experimentCommand, ['-t'])).toBe('--tape needs a value');
  });

  it('names a stray argument of a command that takes none', () => {
    expect(refused(pruneCommand, ['tapes'])).toBe(
      `unexpected argument "tapes" (prune takes no arguments; prune's flags: ${flags(pruneCommand)})`,
    );
  });

  it('through the CLI: one line on stderr, exit 2', async () => {
    const r = await runCli(['show', 'run', '--debreif']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`tapedeck show: unknown flag --debreif: did you mean --debrief? (show's flags: ${flags(showCommand)})\n`);
  });
});
