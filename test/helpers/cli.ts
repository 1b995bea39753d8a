import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * The CLI's entry point in this run's transpiled source (test/global-setup.ts, test/helpers/build-src.ts): what
 * `node --import tsx src/cli/main.ts` runs, without tsx's loader in every process.
 */
export const CLI_MAIN = path.join(inject('srcBuild'), 'cli/main.js');

/** Run the tapedeck CLI from source as a child process. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcessWithoutNullStreams {
  // FORCE_COLOR from the shell that runs the tests would colour every line a test reads: only a test's own counts.
  return spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: undefined, ...env },
    stdio: 'pipe',
  });
}

/** Run the CLI to completion. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string; pid: number }> {
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr, pid: child.pid! };
}

/** Resolve with the URL from the `listening on URL` line, or reject with what the process printed if it exits first. */
export function waitForListening(child: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const onOut = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        child.stdout.off('data', onOut);
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', onOut);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => reject(new Error(`tapedeck exited with ${code} before listening: ${err}`)));
  });
}

/** Run the CLI to completion, with its pid (to check that no process is left behind). */
export const runToEnd = runCli;

/** Run `tapedeck serve --dir DIR --port 0 ARGS`, let `use` talk to it, stop it with SIGTERM; its exit code and output. */
export async function serveWhile(
  dir: string,
  args: string[],
  use: (url: string) => Promise<void>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(['serve', '--dir', dir, '--port', '0', ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await waitForListening(child);
  try {
    await use(url);
  } finally {
    child.kill('SIGTERM');
  }
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}
