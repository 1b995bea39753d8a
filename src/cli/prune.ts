import { loadConfig } from '../config/config.js';
import { TapedeckError } from '../errors.js';
import { parseAge, pruneTapes } from '../tape/housekeeping.js';
import { stringValue, type Command } from './command.js';

export const pruneCommand: Command = {
  name: 'prune',
  summary: 'delete tapes created longer ago than a given age',
  usage: [
    'tapedeck prune --older-than AGE [--dir DIR] [--dry-run] [--json]',
    '',
    '  --older-than AGE   e.g. 30d, 12h, 90m, 45s (age from the tape header createdAt)',
    '  --dry-run          list what would be removed, remove nothing',
  ].join('\n'),
  options: {
    dir: { type: 'string' },
    config: { type: 'string' },
    'older-than': { type: 'string' },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(ctx) {
    const age = stringValue(ctx.values, 'older-than');
    if (age === undefined) throw new TapedeckError('BAD_ARGS', '--older-than AGE is required (e.g. 30d)');
    const ms = parseAge(age);
    const config = loadConfig(stringValue(ctx.values, 'config'), { dir: stringValue(ctx.values, 'dir') }, ctx.env);
    const dryRun = ctx.values['dry-run'] === true;
    const r = await pruneTapes(config.dir, ms, { dryRun });
    if (ctx.values.json === true) {
      ctx.stdout.write(JSON.stringify({ dryRun, ...r }, null, 2) + '\n');
      return 0;
    }
    for (const t of r.removed) ctx.stdout.write(`${dryRun ? 'would remove' : 'removed'} ${t.name} (created ${t.createdAt})\n`);
    for (const s of r.skipped) ctx.stderr.write(`tapedeck prune: skipped ${s.name}: ${s.reason}\n`);
    ctx.stdout.write(`${dryRun ? 'would remove' : 'removed'} ${r.removed.length} tape(s) created before ${r.cutoff}; kept ${r.kept}\n`);
    return 0;
  },
};
