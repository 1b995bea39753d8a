import type { ProxyOptions, RunningProxy } from '../proxy/server.js';
import { runUnder, type RunUnderOptions } from '../proxy/run-under.js';
import type { CommandContext } from './command.js';
import type { Logger } from '../log.js';

/** Wrapper mode (`record|replay ... -- COMMAND ARGS...`): run the command under the proxy, print what was set, exit with its code. */
export async function runWrapped(
  ctx: CommandContext,
  proxy: ProxyOptions,
  log: Logger,
  opts: {
    /** Lines to print once the proxy is up (the replay plan, the tape being written). */
    started?: (proxy: RunningProxy) => string[];
    extra?: Pick<RunUnderOptions, 'launch' | 'agentEnv'>;
  } = {},
): Promise<number> {
  const [command, ...args] = ctx.rest as [string, ...string[]];
  // A port chosen with --port is kept; otherwise any free one (two wrapped runs side by side never collide).
  const port = ctx.values.port === undefined ? 0 : proxy.port;
  const result = await runUnder({
    proxy: { ...proxy, port },
    command,
    args,
    env: ctx.env,
    ...opts.extra,
    onStarted: ({ proxy: running, env }) => {
      for (const line of opts.started?.(running) ?? []) ctx.stderr.write(`tapedeck: ${line}\n`);
      const set = Object.entries(env).map(([k, v]) => `  ${k}=${v}\n`);
      ctx.stderr.write(`tapedeck: running ${[command, ...args].join(' ')} with\n${set.join('')}`);
    },
  });
  const how = result.signal ? `was ended by ${result.signal}` : `exited with code ${result.exitCode}`;
  ctx.stderr.write(`tapedeck: ${result.tape.count} exchange(s) on tape "${result.tape.name}" (${result.tape.path}); ${command} ${how}\n`);
  log.flush();
  if (result.tapeFailure) {
    ctx.stderr.write(`tapedeck: the tape is incomplete: ${result.tapeFailure.message}\n`);
    return result.exitCode === 0 ? 1 : result.exitCode;
  }
  return result.exitCode;
}
