import { TapedeckError } from '../errors.js';
import { startProxy, type RecordOptions } from '../front/server.js';
import { runWrapped } from './shared/wrap.js';
import type { Command } from './shared/command.js';
import { proxyBase, serveSettings, serveUntilSignal, SERVE_OPTIONS } from './shared/serve-options.js';
import { withStore } from './shared/store-options.js';
import { notice } from './shared/notice.js';
import { FAULT_OPTIONS, FAULT_USAGE, faultPlanFrom } from './shared/fault-options.js';

export const recordCommand: Command = {
  name: 'record',
  summary: 'forward every request to its upstream and write each exchange to a tape',
  usage: [
    'tapedeck record NAME [--dir DIR | --store URL] [--namespace NS] [--port N] [--host H] [--route PREFIX=URL]...',
    '                [--config FILE] [--overwrite | --append] [--allow-host NAME]... [--verbose] [--connect-timeout S]',
    '                [--response-timeout S] [--idle-timeout S] [--shutdown-timeout S] [--faults FILE] [--fault RULE]...',
    '                [--seed N] [--sandbox] [-- COMMAND ARGS...]',
    '',
    '  NAME                the tape to write (DIR/NAME.jsonl); --tape NAME (-t) says the same',
    '  -- COMMAND ARGS...  wrapper mode: listen on a free port, run COMMAND with OPENAI_BASE_URL, ANTHROPIC_BASE_URL,',
    '                      GOOGLE_GEMINI_BASE_URL, TAPEDECK_URL (and the proxy variables) set, stop when it exits,',
    '                      exit with its code',
    '  --dir DIR           where tapes live (default ./tapes, or TAPEDECK_DIR, or the config file)',
    '  --store URL         record into a shared store instead: postgres://USER@HOST:PORT/DB (or TAPEDECK_STORE)',
    '  --namespace NS      keep teams or branches apart in one shared store',
    '  --port N            port to listen on (default 8787; 0 takes any free port)',
    '  --host H            address to listen on (default 127.0.0.1)',
    '  --route PREFIX=URL  send PREFIX/... to URL/... (repeatable; adds to the default routes); name an MCP',
    '                      server route so it ends in /mcp (/everything/mcp=http://127.0.0.1:3001/mcp)',
    '  --config FILE       YAML or JSON config (see config/default.yaml)',
    '  --overwrite         replace the tape if it exists',
    '  --append            add to the tape if it exists',
    '  --allow-host NAME   another host name clients may address tapedeck by (repeatable; * turns the check off)',
    '  --verbose           log each exchange (structured, stderr); in wrapper mode, list the variables set',
    '  --sandbox           with -- COMMAND (Linux): run it where nothing but tapedeck is reachable',
    '  --connect-timeout S   seconds to connect to an upstream (default 10)',
    '  --response-timeout S  seconds from a request to its response head (default 300)',
    '  --idle-timeout S      seconds a response body may go quiet (default 120)',
    '  --shutdown-timeout S  on SIGINT / SIGTERM, seconds exchanges in flight get to finish (default 5); one still',
    '                        waiting for its upstream is cancelled at once and written with the error',
    ...FAULT_USAGE,
    '                      (against the live API: an injected answer is on the tape as match.kind fault)',
  ].join('\n'),
  options: { ...SERVE_OPTIONS, overwrite: { type: 'boolean' }, append: { type: 'boolean' }, ...FAULT_OPTIONS },
  allowPositionals: true,
  async run(ctx) {
    const settings = serveSettings(ctx, { usage: 'tapedeck record NAME [flags] [-- COMMAND ARGS...]' });
    const { log } = settings;
    if (ctx.values.overwrite === true && ctx.values.append === true)
      throw new TapedeckError('BAD_ARGS', '--overwrite and --append exclude each other');
    const faults = faultPlanFrom(ctx.values);
    return withStore(settings.config, async (store) => {
      const options: RecordOptions = {
        ...proxyBase(settings, store),
        mode: 'record',
        whenTapeFails: settings.config.whenTapeFails,
        ifExists: ctx.values.overwrite === true ? 'overwrite' : ctx.values.append === true ? 'append' : 'fail',
        ...(faults ? { faults: faults.plan } : {}),
      };
      const lines = (path: string): string[] => [`recording to ${path}`, ...(faults?.rules ?? []).map((r) => `this run: fault ${r}`)];
      if (ctx.rest.length > 0) return runWrapped(ctx, options, log, { started: (p) => lines(p.writer.path) });
      const proxy = await startProxy(options);
      notice(ctx, lines(proxy.writer.path));
      return serveUntilSignal(proxy, store, ctx, log);
    });
  },
};
