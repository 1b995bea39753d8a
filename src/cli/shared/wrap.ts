import type { ProxyOptions, RunningProxy } from '../../front/server.js';
import { runUnder, type RunUnderOptions } from '../../run/run-under.js';
import { sandboxLaunch, sandboxSupport } from '../../run/sandbox.js';
import { TapedeckError } from '../../errors.js';
import type { CommandContext } from './command.js';
import type { Logger } from '../../log.js';
import { storeOf } from '../../tape/stores/open-store.js';
import { notice, noticeLines, type Said } from './notice.js';
import { endedExchanges, runEndLines } from './run-end.js';

/**
 * Wrapper mode (`record|replay ... -- COMMAND ARGS...`): run the command under the proxy, say so in one line (the
 * variables it set, one per line, with `--verbose`), exit with its code.
 */
export async function runWrapped(
  ctx: CommandContext,
  proxy: ProxyOptions,
  log: Logger,
  opts: {
    /** Lines to print once the proxy is up (the replay plan, the tape being written). */
    started?: (proxy: RunningProxy) => (string | Said)[];
    extra?: Pick<RunUnderOptions, 'launch' | 'forwardProxy'>;
    /** A check once the command and the proxy have ended (the replay's contract): the exit code it leaves. */
    after?: (code: number) => Promise<number>;
  } = {},
): Promise<number> {
  const [command, ...args] = ctx.rest as [string, ...string[]];
  if (ctx.values.sandbox === true) {
    // Before anything starts (no replay tape is made for a run that cannot happen).
    const support = sandboxSupport();
    if (!support.ok) throw new TapedeckError('SANDBOX_UNAVAILABLE', `the sandbox cannot run here: ${support.reason}`);
  }
  // A port chosen with --port is kept; otherwise any free one (two wrapped runs side by side never collide).
  const port = ctx.values.port === undefined ? 0 : proxy.port;
  const result = await runUnder({
    proxy: { ...proxy, port },
    command,
    args,
    env: ctx.env,
    ...opts.extra,
    ...(ctx.values.sandbox === true ? { launch: sandboxLaunch } : {}),
    onStarted: ({ proxy: running, env }) => {
      noticeLines(ctx, opts.started?.(running) ?? []);
      const set = Object.entries(env);
      const where = ctx.values.sandbox === true ? ' in the sandbox (no network but tapedeck)' : '';
      const run = `running ${[command, ...args].join(' ')}${where}`;
      if (ctx.values.verbose === true) {
        notice(ctx, `${run} with`);
        ctx.stderr.write(set.map(([k, v]) => `  ${k}=${v}\n`).join(''));
      } else
        notice(ctx, `${run} against ${env.TAPEDECK_URL ?? running.url} (${set.length} environment variables set; --verbose lists them)`);
    },
  });
  const how = result.signal ? `was ended by ${result.signal}` : `exited with code ${result.exitCode}`;
  // How each call was answered, read back from the tape: misses, blocks, faults, what failed upstream.
  const tape = { ...result.tape, replay: proxy.mode === 'replay' && proxy.keepEmpty !== true };
  const exchanges = await endedExchanges(storeOf(proxy), { ...tape, failed: result.tapeFailure !== undefined }, log);
  noticeLines(ctx, runEndLines(tape, exchanges, `${command} ${how}`, { explain: ctx.values.explain === true }));
  if (result.passedThrough.size > 0) {
    const hosts = [...result.passedThrough].map(([host, n]) => `${host} (${n})`).join(', ');
    notice(ctx, `passed through untouched, not on the tape: ${hosts}`, 'warn');
  }
  log.flush();
  if (result.tapeFailure) {
    notice(ctx, `the tape is incomplete: ${result.tapeFailure.message}`, 'error');
    return result.exitCode === 0 ? 1 : result.exitCode;
  }
  return opts.after ? opts.after(result.exitCode) : result.exitCode;
}
