/**
 * `tapedeck serve` as a child process for a test run: started on a free port, its URL read from its `listening on`
 * line, stopped with SIGTERM (every tape finished and closed), its per-tape report read from its `--json` line. The
 * test-runner helpers start the real CLI rather than a server of their own, so that a suite's tapes are recorded and
 * replayed exactly as `tapedeck serve` does it (config file, routes, matching, MCP).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TapeReport } from '../serve/tape-router.js';

export interface ServeProcessOptions {
  /** auto (default), record, replay or refresh. */
  mode?: string;
  /** `--expect`: the recorded calls each replayed test must make (`all`, `llm`, `tools`, tool and model names). */
  expect?: string;
  /** `--faults FILE` and `--fault RULE`s: faults injected, a plan per test's tape; `--seed N`. */
  faults?: string;
  fault?: readonly string[];
  seed?: number | string;
  /** `--rerecord GLOB`: the tests it matches record their tape afresh while the others replay. */
  rerecord?: string;
  /** `--max-age AGE` (`30d`): an older tape is recorded afresh (auto) or fails its test (replay). */
  maxAge?: string;
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

/**
 * The options the environment gives (what the global setup reads, and `useTapedeck` for a serve of its own):
 * `TAPEDECK_MODE`, `TAPEDECK_EXPECT`, `TAPEDECK_FAULTS`, `TAPEDECK_SEED`, `TAPEDECK_RERECORD`, `TAPEDECK_MAX_AGE`,
 * and more flags in `TAPEDECK_SERVE_ARGS` (space-separated). Empty means unset.
 */
export function serveOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ServeProcessOptions {
  const get = (name: string): string | undefined => env[name]?.trim() || undefined;
  const extra = get('TAPEDECK_SERVE_ARGS');
  const pairs: [keyof ServeProcessOptions, string | undefined][] = [
    ['mode', get('TAPEDECK_MODE')],
    ['expect', get('TAPEDECK_EXPECT')],
    ['faults', get('TAPEDECK_FAULTS')],
    ['seed', get('TAPEDECK_SEED')],
    ['rerecord', get('TAPEDECK_RERECORD')],
    ['maxAge', get('TAPEDECK_MAX_AGE')],
  ];
  return {
    ...Object.fromEntries(pairs.filter(([, v]) => v !== undefined)),
    ...(extra !== undefined ? { args: extra.split(/\s+/) } : {}),
  };
}

/** The serve flags the options name. */
function serveFlags(opts: ServeProcessOptions): string[] {
  const flag = (name: string, value: string | number | undefined): string[] => (value === undefined ? [] : [`--${name}`, String(value)]);
  return [
    ...flag('mode', opts.mode),
    ...flag('expect', opts.expect),
    ...flag('faults', opts.faults),
    ...(opts.fault ?? []).flatMap((r) => ['--fault', r]),
    ...flag('seed', opts.seed),
    ...flag('rerecord', opts.rerecord),
    ...flag('max-age', opts.maxAge),
  ];
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
    ...serveFlags(opts),
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
