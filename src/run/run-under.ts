/**
 * Run a command under tapedeck (wrapper mode): start the proxy on a free port, run the command with the environment
 * pointing its SDKs at the proxy, pass SIGINT / SIGTERM on to it, and once it exits stop the proxy (the tape is then
 * complete) and report the command's exit code. The CLI's `record|replay ... -- COMMAND` and any program that runs an
 * agent under replay (an experiment) share this one path.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import path from 'node:path';
import { TapedeckError } from '../errors.js';
import { agentEnv, writeCaBundle } from './agent-env.js';
import { defaultCaDir, loadOrCreateCa } from '../front/ca.js';
import { groupSpawnOptions, startWatchdog, superviseGroup, type ProcessGroup } from './process-group.js';
import { startProxy, type ProxyOptions, type RunningProxy } from '../front/server.js';

export interface RunUnderOptions {
  /** The proxy to start; `port` defaults to 0 (any free port) here. */
  proxy: ProxyOptions;
  command: string;
  args?: readonly string[];
  /** The environment the command starts from. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Variables set last, over tapedeck's own (e.g. a key the agent needs). */
  envOverrides?: Readonly<Record<string, string>>;
  /** Default `inherit`: the command shares this process's terminal. */
  stdio?: StdioOptions;
  /** Pass this process's SIGINT / SIGTERM on to the command (default true). */
  forwardSignals?: boolean;
  /**
   * Make the command's other HTTP(S) traffic go through tapedeck too (`HTTP_PROXY`, `HTTPS_PROXY`, the CA trusted):
   * default on, with the CA in `defaultCaDir(env)`; `false` sets the base URLs only.
   */
  forwardProxy?: false | { caDir?: string };
  /**
   * Wrap the command line before it is spawned (the sandbox runs it inside its own network namespace). Gets the
   * running proxy, returns the program and arguments to spawn and, optionally, a cleanup to run after it exits.
   */
  launch?: (cmd: { command: string; args: readonly string[]; proxy: RunningProxy }) => Promise<Launch>;
  /** Called once the proxy listens and the command is spawned: what was set, for the caller to print. */
  onStarted?: (started: { proxy: RunningProxy; env: Readonly<Record<string, string>>; child: ChildProcess }) => void;
}

export interface Launch {
  command: string;
  args: readonly string[];
  /** Variables the wrapper needs beside the agent's. */
  env?: Readonly<Record<string, string>>;
  cleanup?: () => Promise<void>;
}

export interface RunUnderResult {
  /** The command's exit code; 128 + the signal number when a signal ended it. */
  exitCode: number;
  /** The signal that ended the command, if one did. */
  signal?: NodeJS.Signals;
  /** The tape written: the recording, or the replay tape. */
  tape: { name: string; path: string; count: number };
  /** Hosts passed through untouched (`host:port` -> connections or requests): not on the tape. */
  passedThrough: ReadonlyMap<string, number>;
  /** Set when the tape could not be written completely (disk full, I/O error). */
  tapeFailure?: TapedeckError;
}

/** Run `command` under a proxy started from `opts.proxy`; resolves once the command has exited and the tape is closed. */
export async function runUnder(opts: RunUnderOptions): Promise<RunUnderResult> {
  // Signals are taken from the start: one that comes before the command runs is passed on as soon as it does. They go
  // to the command's whole process group (it has one of its own: see process-group.ts).
  let group: ProcessGroup | undefined;
  let child: ChildProcess | undefined;
  let pending: NodeJS.Signals | undefined;
  const forward = (signal: NodeJS.Signals): void => {
    if (group !== undefined && child?.exitCode === null) group.signal(signal);
    else if (signal !== 'SIGWINCH') pending ??= signal;
  };
  if (opts.forwardSignals !== false) for (const s of FORWARDED) process.on(s, forward);
  try {
    return await run(opts, (c, g) => {
      child = c;
      group = g;
      if (pending !== undefined) g.signal(pending);
    });
  } finally {
    for (const s of FORWARDED) process.off(s, forward);
  }
}

/**
 * The signals passed on to the command: SIGHUP (the terminal closed) and SIGWINCH (it was resized) too, since the
 * command's own session no longer gets them from the terminal.
 */
const FORWARDED: readonly NodeJS.Signals[] =
  process.platform === 'win32' ? ['SIGINT', 'SIGTERM'] : ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGWINCH'];

async function run(opts: RunUnderOptions, spawnedChild: (child: ChildProcess, group: ProcessGroup) => void): Promise<RunUnderResult> {
  const baseEnv = opts.env ?? process.env;
  const ca = opts.forwardProxy === false ? undefined : loadOrCreateCa(opts.forwardProxy?.caDir ?? defaultCaDir(baseEnv));
  const proxy = await startProxy({
    ...opts.proxy,
    port: opts.proxy.port ?? 0,
    ...(ca ? { forwardProxy: { ...opts.proxy.forwardProxy, ca: () => ca } } : {}),
  });
  let cleanup: (() => Promise<void>) | undefined;
  let group: ProcessGroup | undefined;
  // The CA bundles the command's variables name live as long as it runs.
  const scratch = ca ? mkdtempSync(path.join(tmpdir(), 'tapedeck-run-')) : undefined;
  try {
    const files = ca && scratch ? writeCaBundle(scratch, ca.certPem, baseEnv) : undefined;
    const vars = agentEnv({
      url: proxy.url,
      ...(files ? { forwardProxy: { caCertPath: files.extraPath, bundlePath: files.bundlePath } } : {}),
    });
    const launched = opts.launch
      ? await opts.launch({ command: opts.command, args: opts.args ?? [], proxy })
      : { command: opts.command, args: opts.args ?? [] };
    cleanup = launched.cleanup;
    const env = { ...baseEnv, ...vars, ...launched.env, ...opts.envOverrides };
    const child = spawn(launched.command, [...launched.args], { env, stdio: opts.stdio ?? 'inherit', ...groupSpawnOptions() });
    const watchdog = startWatchdog(child.pid);
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new TapedeckError(
            'COMMAND_FAILED',
            `cannot run ${launched.command}: ${err.code === 'ENOENT' ? 'command not found' : err.message}`,
            { details: { command: launched.command, code: err.code }, cause: err },
          ),
        ),
      );
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await spawned.catch((err: unknown) => {
      watchdog?.stop();
      throw err;
    });
    group = superviseGroup(child, watchdog);
    spawnedChild(child, group);
    opts.onStarted?.({ proxy, env: { ...vars, ...opts.envOverrides }, child });
    const { code, signal } = await exited;
    // What the command started and left running in its group ends with it.
    await group.end();
    await proxy.close();
    const result: RunUnderResult = {
      exitCode: code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0),
      tape: { name: proxy.writer.name, path: proxy.writer.path, count: proxy.writer.count },
      passedThrough: proxy.passedThrough,
    };
    if (signal) result.signal = signal;
    if (proxy.writer.failure) result.tapeFailure = proxy.writer.failure;
    return result;
  } finally {
    // Also on a failure to start the command: the tape (and its lock) is given back.
    await group?.end();
    await proxy.close();
    await cleanup?.();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
