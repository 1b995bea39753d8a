import type { ProxyOptions, RunningProxy } from '../proxy/server.js';
import { runUnder, type RunUnderOptions } from '../proxy/run-under.js';
import { sandboxLaunch, sandboxSupport } from '../proxy/sandbox.js';
import { TapedeckError } from '../errors.js';
import type { CommandContext } from './command.js';
import type { Logger } from '../log.js';
import { runTrouble } from '../inspect/run-trouble.js';
import { createDirStore } from '../tape/dir-store.js';

/** Wrapper mode (`record|replay ... -- COMMAND ARGS...`): run the command under the proxy, print what was set, exit with its code. */
export async function runWrapped(
  ctx: CommandContext,
  proxy: ProxyOptions,
  log: Logger,
  opts: {
    /** Lines to print once the proxy is up (the replay plan, the tape being written). */
    started?: (proxy: RunningProxy) => string[];
    extra?: Pick<RunUnderOptions, 'launch' | 'forwardProxy'>;
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
      for (const line of opts.started?.(running) ?? []) ctx.stderr.write(`tapedeck: ${line}\n`);
      const set = Object.entries(env).map(([k, v]) => `  ${k}=${v}\n`);
      const where = ctx.values.sandbox === true ? ' in the sandbox (no network but tapedeck)' : '';
      ctx.stderr.write(`tapedeck: running ${[command, ...args].join(' ')}${where} with\n${set.join('')}`);
    },
  });
  const how = result.signal ? `was ended by ${result.signal}` : `exited with code ${result.exitCode}`;
  ctx.stderr.write(`tapedeck: ${result.tape.count} exchange(s) on tape "${result.tape.name}" (${result.tape.path}); ${command} ${how}\n`);
  // What went wrong, named from the tape: an upstream that failed a call (a 429), calls blocked as side effects.
  if (result.tape.count > 0) {
    const store = proxy.store ?? (proxy.dir !== undefined ? createDirStore(proxy.dir) : undefined);
    const tape = await store?.load(result.tape.name, { resolveFiles: false }).catch(() => undefined);
    const trouble = tape ? runTrouble(tape.exchanges) : undefined;
    if (trouble !== undefined) ctx.stderr.write(`tapedeck: on the tape: ${trouble}\n`);
  }
  if (result.passedThrough.size > 0) {
    const hosts = [...result.passedThrough].map(([host, n]) => `${host} (${n})`).join(', ');
    ctx.stderr.write(`tapedeck: passed through untouched, not on the tape: ${hosts}\n`);
  }
  log.flush();
  if (result.tapeFailure) {
    ctx.stderr.write(`tapedeck: the tape is incomplete: ${result.tapeFailure.message}\n`);
    return result.exitCode === 0 ? 1 : result.exitCode;
  }
  return result.exitCode;
}
