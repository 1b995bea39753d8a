import { TapedeckError } from '../errors.js';
import { parseAge, pruneTapes } from '../tape/stores/housekeeping.js';
import { stringValue, type Command } from './shared/command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { notice } from './shared/notice.js';

export const pruneCommand: Command = {
  name: 'prune',
  summary: 'delete tapes created longer ago than a given age, or replay tapes (never one being recorded)',
  usage: [
    'tapedeck prune --older-than AGE [--replays] [--dir DIR | --store URL] [--dry-run] [--json]',
    'tapedeck prune --replays [--dir DIR | --store URL] [--dry-run] [--json]',
    '',
    '  --older-than AGE   e.g. 30d, 12h, 90m, 45s (age from the tape header createdAt)',
    '  --replays          only replay tapes (with --older-than: only those older than AGE)',
    '  --dry-run          list what would be removed, remove nothing',
    '  --json             print {dryRun, removed, skipped, kept, cutoff} as JSON',
    STORE_USAGE,
  ].join('\n'),
  options: {
    ...STORE_OPTIONS,
    'older-than': { type: 'string' },
    replays: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(ctx) {
    const age = stringValue(ctx.values, 'older-than');
    const replaysOnly = ctx.values.replays === true;
    if (age === undefined && !replaysOnly)
      throw new TapedeckError('BAD_ARGS', '--older-than AGE (e.g. 30d) or --replays is required: say what to delete');
    const olderThanMs = age === undefined ? undefined : parseAge(age);
    const dryRun = ctx.values['dry-run'] === true;
    return withStore(commandConfig(ctx), async (store) => {
      const r = await pruneTapes(store, { ...(olderThanMs !== undefined ? { olderThanMs } : {}), replaysOnly, dryRun });
      if (ctx.values.json === true) {
        ctx.stdout.write(JSON.stringify({ dryRun, ...r }, null, 2) + '\n');
        return 0;
      }
      const verb = dryRun ? 'would remove' : 'removed';
      for (const t of r.removed) ctx.stdout.write(`${verb} ${t.name} (created ${t.createdAt})\n`);
      for (const s of r.skipped) notice(ctx, `skipped ${s.name}: ${s.reason}`, 'warn', 'tapedeck prune');
      const what = `${replaysOnly ? 'replay ' : ''}tape(s)${r.cutoff !== undefined ? ` created before ${r.cutoff}` : ''}`;
      ctx.stdout.write(`${verb} ${r.removed.length} ${what}; kept ${r.kept}\n`);
      return 0;
    });
  },
};
