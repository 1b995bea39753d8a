import { TapedeckError } from '../errors.js';
import type { ResolvedTape } from '../tape/store.js';
import type { Command } from './shared/command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';

export const rmCommand: Command = {
  name: 'rm',
  summary: 'delete a tape and its large bodies (and, with --with-replays, the tapes that replay it); never one being recorded',
  usage: [
    'tapedeck rm NAME... [--dir DIR | --store URL] [--with-replays]',
    '',
    '  NAME             a tape name, a unique prefix of one, latest (the newest recorded tape) or a path to a .jsonl',
    '  --with-replays   also delete the tapes whose header says they replay it (replayOf.tape)',
    STORE_USAGE,
    '',
    'A tape that a running tapedeck is writing is refused, naming its pid (unless its lock is stale).',
  ].join('\n'),
  options: { ...STORE_OPTIONS, 'with-replays': { type: 'boolean' } },
  allowPositionals: true,
  async run(ctx) {
    if (ctx.positionals.length === 0) throw new TapedeckError('BAD_ARGS', 'usage: tapedeck rm NAME... [--dir DIR] [--with-replays]');
    return withStore(commandConfig(ctx), async (store) => {
      // Resolve every reference before deleting anything: one bad name deletes nothing.
      const refs: ResolvedTape[] = [];
      for (const name of ctx.positionals) refs.push(await store.resolve(name));
      for (const ref of refs) {
        const names = [ref.name, ...(ctx.values['with-replays'] === true ? await ref.store.replaysOf(ref.name) : [])];
        for (const name of names) {
          const r = await ref.store.remove(name);
          ctx.stdout.write(`removed ${r.path}${r.sideFiles ? ' and its side files' : ''}\n`);
        }
      }
      return 0;
    });
  },
};
