/**
 * The CLI run in this process (src/cli/run-cli.ts: the dispatch, flag parsing, exit codes and one-line errors
 * `main.ts` runs in a process), for tests of what a command does rather than of the process around it: no process
 * start (~0.3-0.6 s of CPU each). The environment is the one `runCli` (test/helpers/cli.ts) gives a child: this
 * process's, with `env` over it; the working directory is this process's, as the child's is. What the command
 * writes to `process.stdout` / `process.stderr` themselves while it runs is captured too, as a process would print
 * it. For commands that create no logger (pino writes to fd 2, past any stream): read-only ones like show, diff,
 * export, drift. What only a process shows (its exit status, signals, a closed pipe, logs) stays with `runCli`.
 */
import { PassThrough } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { runCli } from '../../src/cli/run-cli.js';

export async function runCliInProcess(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const writes = { out: process.stdout.write, err: process.stderr.write };
  process.stdout.write = ((chunk: string | Uint8Array) => ((out += chunk.toString()), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((err += chunk.toString()), true)) as typeof process.stderr.write;
  try {
    const code = await runCli(args, { stdout, stderr, env: { ...process.env, FORCE_COLOR: undefined, ...env } });
    await tick(); // what was written last, delivered
    return { code, stdout: out, stderr: err };
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
  }
}
