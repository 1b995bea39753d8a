import { loadConfig } from '../config/config.js';
import { TapedeckError } from '../errors.js';
import { removeTape } from '../tape/housekeeping.js';
import { replaysOf, resolveTape } from '../tape/resolve.js';
import { stringValue, type Command } from './command.js';

export const rmCommand: Command = {
  name: 'rm',
  summary: 'delete a tape and its .files/ side folder (and, with --with-replays, the tapes that replay it)',
  usage: [
    'tapedeck rm NAME... [--dir DIR] [--with-replays]',
    '',
    '  NAME             a tape name, a unique prefix of one, latest (the newest recorded tape) or a path to a .jsonl',
    '  --with-replays   also delete the tapes whose header says they replay it (replayOf.tape)',
  ].join('\n'),
  options: { dir: { type: 'string' }, config: { type: 'string' }, 'with-replays': { type: 'boolean' } },
  allowPositionals: true,
  async run(ctx) {
    if (ctx.positionals.length === 0) throw new TapedeckError('BAD_ARGS', 'usage: tapedeck rm NAME... [--dir DIR] [--with-replays]');
    const config = loadConfig(stringValue(ctx.values, 'config'), { dir: stringValue(ctx.values, 'dir') }, ctx.env);
    // Resolve every reference before deleting anything: one bad name deletes nothing.
    const refs = [];
    for (const name of ctx.positionals) refs.push(await resolveTape(config.dir, name));
    for (const ref of refs) {
      const names = [ref.name, ...(ctx.values['with-replays'] === true ? await replaysOf(ref.dir, ref.name) : [])];
      for (const name of names) {
        const r = await removeTape(ref.dir, name);
        ctx.stdout.write(`removed ${r.file}${r.sideFiles ? ' and its side files' : ''}\n`);
      }
    }
    return 0;
  },
};
