/** Run a CLI command in-process (as main.ts would, minus process exit) and capture what it prints. */
import { PassThrough } from 'node:stream';
import { parseArgs } from 'node:util';
import type { Command, ParsedValues } from '../../src/cli/shared/command.js';

export async function runCommand(
  cmd: Command,
  args: string[],
  opts: { columns?: number; tty?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const parsed = parseArgs({ args, options: cmd.options, strict: true, allowPositionals: cmd.allowPositionals ?? false });
  const stdout = Object.assign(
    new PassThrough(),
    opts.tty ? { isTTY: true } : {},
    opts.columns !== undefined ? { columns: opts.columns } : {},
  );
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await cmd.run({
    values: parsed.values as ParsedValues,
    positionals: parsed.positionals,
    rest: [],
    stdout,
    stderr,
    env: opts.env ?? {},
  });
  return { code, stdout: out, stderr: err };
}
