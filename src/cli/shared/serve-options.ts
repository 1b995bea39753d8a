import { loadConfig, parseRouteSpec, routeSources, routesOf, type Config } from '../../config/config.js';
import type { ExactKeyOptions } from '../../replay/exact-key.js';
import type { Route } from '../../tape/schema.js';
import { TapedeckError } from '../../errors.js';
import { createLogger, type Logger } from '../../log.js';
import type { RunningProxy, Timeouts } from '../../front/server.js';
import { validateTapeName } from '../../tape/paths.js';
import type { TapeStore } from '../../tape/store.js';
import { createSecretDetector, type SecretDetector } from '../../tape/redaction/secrets.js';
import { stringList, stringValue, type CommandContext, type OptionsConfig } from './command.js';
import { STORE_OPTIONS } from './store-options.js';
import { untilStopped } from './until-stopped.js';
import { notice, noticeLines } from './notice.js';
import { endedExchanges, runEndLines } from './run-end.js';
import { requiredTape, TAPE_OPTION } from './tape-arg.js';

/** Flags shared by `record` and `replay`. */
export const SERVE_OPTIONS: OptionsConfig = {
  ...TAPE_OPTION,
  ...STORE_OPTIONS,
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  route: { type: 'string', multiple: true },
  verbose: { type: 'boolean' },
  'allow-host': { type: 'string', multiple: true },
  'connect-timeout': { type: 'string' },
  'response-timeout': { type: 'string' },
  'idle-timeout': { type: 'string' },
  'shutdown-timeout': { type: 'string' },
  sandbox: { type: 'boolean' },
};

/** The timeout flags (seconds) as config overrides. */
function timeoutFlags(values: CommandContext['values']): Partial<Record<'connect' | 'response' | 'idle' | 'shutdown', number>> {
  const out: Partial<Record<'connect' | 'response' | 'idle' | 'shutdown', number>> = {};
  for (const name of ['connect', 'response', 'idle', 'shutdown'] as const) {
    const text = stringValue(values, `${name}-timeout`);
    if (text === undefined) continue;
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new TapedeckError('BAD_ARGS', `--${name}-timeout must be a positive number of seconds (got "${text}")`);
    out[name] = n;
  }
  return out;
}

export interface ServeSettings {
  tape: string;
  config: Config;
  log: Logger;
  /** Built-in default routes, and the ones the user chose (config file, --route), for replay's precedence. */
  routeSources: { defaults: Route[]; chosen: Route[] };
  /** Says, once and plainly, that the tape can no longer be written. */
  onTapeFailure: (err: TapedeckError) => void;
}

/**
 * `opts.usage`: the command's short usage, said when the tape is missing or two are named. `opts.tapeRef`: the tape
 * is a reference to an existing tape (a name, `latest`, a prefix, a path), resolved later. `opts.replay`: the tape
 * written is a replay tape (what the failure line speaks of).
 */
export function serveSettings(ctx: CommandContext, opts: { usage: string; tapeRef?: boolean; replay?: boolean }): ServeSettings {
  const tape = requiredTape(ctx, opts.usage);
  if (ctx.values.sandbox === true && ctx.rest.length === 0)
    throw new TapedeckError('BAD_ARGS', '--sandbox runs a command in a sandbox: add -- COMMAND ARGS...');
  if (opts.tapeRef !== true) validateTapeName(tape);
  const portText = stringValue(ctx.values, 'port');
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d+$/.test(portText) || port > 65535)
      throw new TapedeckError('BAD_ARGS', `--port must be a number from 0 to 65535 (got "${portText}")`);
  }
  const file = stringValue(ctx.values, 'config');
  const flags = stringList(ctx.values, 'route');
  for (const spec of flags) asFlag(() => parseRouteSpec(spec));
  const config = loadConfig(
    file,
    {
      dir: stringValue(ctx.values, 'dir'),
      store: stringValue(ctx.values, 'store'),
      namespace: stringValue(ctx.values, 'namespace'),
      host: stringValue(ctx.values, 'host'),
      port,
      routes: flags,
      allowHosts: stringList(ctx.values, 'allow-host'),
      timeouts: timeoutFlags(ctx.values),
    },
    ctx.env,
  );
  const log = createLogger(ctx.values.verbose === true ? 'debug' : (ctx.env.TAPEDECK_LOG ?? 'warn'));
  const [tapeKind, mode] = opts.replay === true ? ['replay tape', 'replay'] : ['tape', 'record'];
  // Said once, when the tape fails: what happens to the requests from now on.
  const onTapeFailure = (err: TapedeckError): void =>
    notice(
      ctx,
      config.whenTapeFails === 'serve'
        ? `${err.message}; ${mode} goes on answering (whenTapeFails: serve), but the ${tapeKind} is incomplete from here`
        : `${err.message}; nothing more will reach the ${tapeKind} (${mode} answers 503 from now on, unless whenTapeFails: serve)`,
      'error',
    );
  return { tape, config, log, routeSources: routeSources(file, flags), onTapeFailure };
}

export { routesOf };

/** The startProxy options every serving command shares, from the resolved settings and the open store. */
export function proxyBase(
  { tape, config, log, onTapeFailure }: Pick<ServeSettings, 'tape' | 'config' | 'log' | 'onTapeFailure'>,
  store: TapeStore,
): {
  tape: string;
  store: TapeStore;
  host: string;
  port: number;
  routes: ReturnType<typeof routesOf>;
  redact: Config['redact'];
  keyOptions: ExactKeyOptions;
  log: Logger;
  allowHosts: readonly string[];
  onTapeFailure: (err: TapedeckError) => void;
  forwardProxy: { passThrough: readonly string[]; anyClient: boolean };
  timeouts: Timeouts;
} {
  return {
    tape,
    store,
    host: config.host,
    port: config.port,
    routes: routesOf(config),
    redact: config.redact,
    keyOptions: keyOptions(config),
    log,
    allowHosts: config.allowHosts,
    onTapeFailure,
    forwardProxy: { passThrough: config.passThrough, anyClient: config.forwardProxyClients === 'any' },
    timeouts: {
      connectMs: config.timeouts.connect * 1000,
      responseMs: config.timeouts.response * 1000,
      idleMs: config.timeouts.idle * 1000,
      shutdownMs: config.timeouts.shutdown * 1000,
    },
  };
}

/** Serve until SIGINT / SIGTERM (or the end of the npx that started it, `until-stopped.ts`), then finish writing and resolve 0. */
export async function serveUntilSignal(
  proxy: RunningProxy,
  store: TapeStore,
  ctx: CommandContext,
  log: Logger,
  after?: (code: number) => Promise<number>,
): Promise<number> {
  // Handlers before the line: whoever waits for it may signal at once (a pipe write is synchronous on Linux), and a
  // signal before them would kill the process with the tape unfinished and locked.
  const stopped = untilStopped(log);
  ctx.stdout.write(`listening on ${proxy.url}\n`);
  await stopped;
  await proxy.close();
  // The count is what is on disk: a line that could not be written is not counted.
  const tapeKind = proxy.source !== undefined ? 'replay tape' : 'tape';
  const tape = { name: proxy.writer.name, path: proxy.writer.path, count: proxy.writer.count, replay: proxy.source !== undefined };
  const exchanges = await endedExchanges(store, { ...tape, failed: proxy.writer.failure !== undefined }, log);
  noticeLines(ctx, runEndLines(tape, exchanges, undefined, { explain: ctx.values.explain === true }));
  log.flush();
  const failed = proxy.writer.failure;
  if (failed === undefined) return after ? after(0) : 0;
  notice(ctx, `the ${tapeKind} is incomplete: ${failed.message}`, 'error');
  return 1;
}

/** Run `check`; a BAD_ARGS it throws about a value (`route must be ...`) is reported as the flag's (`--route must be ...`). */
function asFlag(check: () => unknown): void {
  try {
    check();
  } catch (err) {
    if (err instanceof TapedeckError && err.code === 'BAD_ARGS') throw new TapedeckError('BAD_ARGS', `--${err.message}`);
    throw err;
  }
}

/**
 * How replay keys requests, from the config: the ignored fields, what an exhausted key does, and the same secret
 * rules and secret query names the tape writer redacted with (a request carrying the real secret keys like its
 * recording, and a miss report quotes redacted values only).
 */
export function matchingOptions(config: Config): {
  ignoreFields: readonly string[];
  whenExhausted: Config['match']['whenExhausted'];
  secrets: SecretDetector;
  secretQuery: readonly string[];
} {
  return { ...keyOptions(config), whenExhausted: config.match.whenExhausted };
}

/** How the config keys a request (replay's exact key; a store indexes recordings by it too). */
export function keyOptions(config: Config): {
  ignoreFields: readonly string[];
  secrets: SecretDetector;
  secretQuery: readonly string[];
} {
  return { ignoreFields: config.match.ignoreFields, secrets: createSecretDetector(config.redact), secretQuery: config.redact.query };
}
