import { spawn } from 'node:child_process';
import { TapedeckError } from '../errors.js';
import { createLogger } from '../log.js';
import { startViewer } from '../view/viewer.js';
import { stringValue, type Command } from './shared/command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { untilStopped } from './shared/until-stopped.js';
import { notice } from './shared/notice.js';
import { tapeArgument, TAPE_OPTION } from './shared/tape-arg.js';

export const viewCommand: Command = {
  name: 'view',
  summary: 'open the tapes in a browser: timeline waterfall, step detail, debrief, compare two runs, live updates',
  usage: [
    'tapedeck view [NAME] [--dir DIR | --store URL] [--port N] [--no-open] [--config FILE] [--verbose]',
    '',
    '  NAME        open this tape (default: the list of tapes); --tape NAME says the same',
    '  --port N    port on 127.0.0.1 (default 0: any free port); the URL is printed on stdout',
    '  --no-open   do not start a browser (xdg-open / open)',
    '  --verbose   structured logs on stderr',
    STORE_USAGE,
  ].join('\n'),
  options: {
    ...STORE_OPTIONS,
    ...TAPE_OPTION,
    port: { type: 'string', short: 'p' },
    'no-open': { type: 'boolean' },
    verbose: { type: 'boolean' },
  },
  allowPositionals: true,
  async run(ctx) {
    const name = tapeArgument(ctx, 'tapedeck view [NAME] [--dir DIR] [--port N] [--no-open]');
    const portText = stringValue(ctx.values, 'port') ?? '0';
    const port = Number(portText);
    if (!/^\d+$/.test(portText) || port > 65535)
      throw new TapedeckError('BAD_ARGS', `--port must be a number from 0 to 65535 (got "${portText}")`);
    const config = commandConfig(ctx);
    const log = createLogger(ctx.values.verbose === true ? 'debug' : (ctx.env.TAPEDECK_LOG ?? 'warn'));
    await withStore(config, async (configured) => {
      // NAME may be `latest`, a unique prefix or a path to a .jsonl (then the viewer shows that tape's folder).
      const ref = name === undefined ? undefined : await configured.resolve(name, { includeReplays: true });
      const viewer = await startViewer({ store: ref?.store ?? configured, port, prices: config.prices, log });
      const url = ref === undefined ? viewer.url : `${viewer.url}#/tape?name=${encodeURIComponent(ref.name)}`;
      const stopped = untilStopped(log);
      ctx.stdout.write(`listening on ${url}\n`);
      if (ctx.values['no-open'] !== true) openBrowser(url, (msg) => notice(ctx, msg, 'warn', 'tapedeck view'));
      await stopped;
      await viewer.close();
    });
    log.flush();
    return 0;
  },
};

/** Start the desktop's browser on `url` (xdg-open, open, start); say so when there is none, never fail. */
function openBrowser(url: string, warn: (msg: string) => void): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.once('error', () => warn(`could not start a browser (${cmd}); open ${url} yourself`));
    child.unref();
  } catch {
    warn(`could not start a browser (${cmd}); open ${url} yourself`);
  }
}
