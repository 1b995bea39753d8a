/**
 * `tapedeck serve` as a child process for a test run: started on a free port, its URL read from its `listening on`
 * line, stopped with SIGTERM (every tape finished and closed), its per-tape report read from its `--json` line. The
 * test-runner helpers start the real CLI rather than a server of their own, so that a suite's tapes are recorded and
 * replayed exactly as `tapedeck serve` does it (config file, routes, matching, MCP).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TapeReport } from '../proxy/tape-router.js';

export interface ServeProcessOptions {
  /** auto (default), record, replay or refresh. */
  mode?: string;
  /** The tape folder (default: serve's own default, ./tapes or TAPEDECK_DIR). */
  dir?: string;
  /** More `tapedeck serve` flags (`--route /x=URL`, `--config FILE`, ...). */
  args?: readonly string[];
  /** The working directory (default: this process's). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Where serve's own lines (the report on stop) go. Default: this process's stderr. */
  stderr?: NodeJS.WritableStream;
}

export interface ServeProcess {
  url: string;
  /** Stop it (SIGTERM): every tape is finished and closed. Resolves to its exit code and what each tape did. */
  stop(): Promise<{ code: number | null; tapes: TapeReport[] }>;
}

/** The CLI next to this module: `dist/cli/main.js` in the package (run from source: `src/cli/main.ts` through tsx). */
function cliCommand(): string[] {
  const built = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  if (existsSync(built)) return [built];
  return ['--import', 'tsx', fileURLToPath(new URL('../cli/main.ts', import.meta.url))];
}

export async function startServeProcess(opts: ServeProcessOptions = {}): Promise<ServeProcess> {
  const args = [
    ...cliCommand(),
    'serve',
    '--port',
    '0',
    '--json',
    ...(opts.mode !== undefined ? ['--mode', opts.mode] : []),
    ...(opts.dir !== undefined ? ['--dir', opts.dir] : []),
    ...(opts.args ?? []),
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: opts.cwd ?? process.cwd(),
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const err = opts.stderr ?? process.stderr;
  child.stderr?.on('data', (d: Buffer) => err.write(d));
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (): void => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        child.stdout?.off('data', onData);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.once('error', reject);
    void exited.then((code) => reject(new Error(`tapedeck serve exited (${code}) before it listened; see its message above`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      const last = out.trim().split('\n').at(-1) ?? '';
      let tapes: TapeReport[] = [];
      try {
        tapes = (JSON.parse(last) as { tapes: TapeReport[] }).tapes;
      } catch {
        // No report: serve did not get to print it (killed); its exit code says so.
      }
      return { code, tapes };
    },
  };
}
