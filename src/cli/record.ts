import { TapedeckError } from '../errors.js';
import { startProxy } from '../proxy/server.js';
import type { Command } from './command.js';
import { proxyBase, serveSettings, serveUntilSignal, SERVE_OPTIONS } from './serve-options.js';

export const recordCommand: Command = {
  name: 'record',
  summary: 'forward every request to its upstream and write each exchange to a tape',
  usage: [
    'tapedeck record --tape NAME [--dir DIR] [--port N] [--host H] [--route PREFIX=URL]... [--config FILE]',
    '                [--overwrite | --append] [--verbose]',
    '',
    '  --tape NAME         tape to write (DIR/NAME.jsonl)',
    '  --dir DIR           where tapes live (default ./tapes, or TAPEDECK_DIR, or the config file)',
    '  --port N            port to listen on (default 8787; 0 takes any free port)',
    '  --host H            address to listen on (default 127.0.0.1)',
    '  --route PREFIX=URL  send PREFIX/... to URL/... (repeatable; adds to the default routes); name an MCP',
    '                      server route so it ends in /mcp (/everything/mcp=http://127.0.0.1:3001/mcp)',
    '  --config FILE       YAML or JSON config (see config/default.yaml)',
    '  --overwrite         replace the tape if it exists',
    '  --append            add to the tape if it exists',
    '  --verbose           log each exchange (structured, stderr)',
  ].join('\n'),
  options: { ...SERVE_OPTIONS, overwrite: { type: 'boolean' }, append: { type: 'boolean' } },
  async run(ctx) {
    const settings = serveSettings(ctx);
    const { log } = settings;
    if (ctx.values.overwrite === true && ctx.values.append === true)
      throw new TapedeckError('BAD_ARGS', '--overwrite and --append exclude each other');
    const proxy = await startProxy({
      ...proxyBase(settings),
      mode: 'record',
      whenTapeFails: settings.config.whenTapeFails,
      ifExists: ctx.values.overwrite === true ? 'overwrite' : ctx.values.append === true ? 'append' : 'fail',
    });
    ctx.stderr.write(`tapedeck: recording to ${proxy.writer.path}\n`);
    return serveUntilSignal(proxy, ctx, log);
  },
};
