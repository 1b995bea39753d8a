import { loadConfig } from '../config/config.js';
import { TapedeckError } from '../errors.js';
import { removeTape } from '../tape/housekeeping.js';
import { stringValue, type Command } from './command.js';

export const rmCommand: Command = {
  name: 'rm',
  summary: 'delete a tape and its .files/ side folder',
  usage: 'tapedeck rm NAME... [--dir DIR]',
  options: { dir: { type: 'string' }, config: { type: 'string' } },
  allowPositionals: true,
  async run(ctx) {
    if (ctx.positionals.length === 0) throw new TapedeckError('BAD_ARGS', 'usage: tapedeck rm NAME... [--dir DIR]');
    const config = loadConfig(stringValue(ctx.values, 'config'), { dir: stringValue(ctx.values, 'dir') }, ctx.env);
    for (const name of ctx.positionals) {
      const r = await removeTape(config.dir, name);
      ctx.stdout.write(`removed ${r.file}${r.sideFiles ? ' and its side files' : ''}\n`);
    }
    return 0;
  },
};
