/**
 * Run a command under tapedeck (wrapper mode): start the proxy on a free port, run the command with the environment
 * pointing its SDKs at the proxy, pass SIGINT / SIGTERM on to it, and once it exits stop the proxy (the tape is then
 * complete) and report the command's exit code. The CLI's `record|replay ... -- COMMAND` and any program that runs an
 * agent under replay (an experiment) share this one path.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { constants } from 'node:os';
import { TapedeckError } from '../errors.js';
import { agentEnv, type AgentEnvOptions } from './agent-env.js';
import { startProxy, type ProxyOptions, type RunningProxy } from './server.js';

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
  /** Extra settings for the variables tapedeck sets (forward proxy and its CA). */
  agentEnv?: Omit<AgentEnvOptions, 'url'>;
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
  /** Set when the tape could not be written completely (disk full, I/O error). */
  tapeFailure?: TapedeckError;
}

/** Run `command` under a proxy started from `opts.proxy`; resolves once the command has exited and the tape is closed. */
export async function runUnder(opts: RunUnderOptions): Promise<RunUnderResult> {
  const proxy = await startProxy({ ...opts.proxy, port: opts.proxy.port ?? 0 });
  let cleanup: (() => Promise<void>) | undefined;
  try {
    const vars = agentEnv({ ...opts.agentEnv, url: proxy.url });
    const launched = opts.launch
      ? await opts.launch({ command: opts.command, args: opts.args ?? [], proxy })
      : { command: opts.command, args: opts.args ?? [] };
    cleanup = launched.cleanup;
    const env = { ...(opts.env ?? process.env), ...vars, ...launched.env, ...opts.envOverrides };
    const child = spawn(launched.command, [...launched.args], { env, stdio: opts.stdio ?? 'inherit' });
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
    await spawned;
    const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
    if (opts.forwardSignals !== false) {
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
    }
    opts.onStarted?.({ proxy, env: { ...vars, ...opts.envOverrides }, child });
    const { code, signal } = await exited.finally(() => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
    });
    await proxy.close();
    const result: RunUnderResult = {
      exitCode: code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0),
      tape: { name: proxy.writer.name, path: proxy.writer.path, count: proxy.writer.count },
    };
    if (signal) result.signal = signal;
    if (proxy.writer.failure) result.tapeFailure = proxy.writer.failure;
    return result;
  } finally {
    // Also on a failure to start the command: the tape (and its lock) is given back.
    await proxy.close();
    await cleanup?.();
  }
}
