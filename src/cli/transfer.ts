/**
 * `tapedeck push` and `pull`: move tapes between the tape folder and a shared store, exactly (the same header and
 * records both ways: `tapedeck diff` of a tape and its round trip finds them identical). Every reference is resolved
 * and every target checked before anything is copied; an existing tape is refused unless --overwrite.
 */
import { TapedeckError } from '../errors.js';
import { indexKey } from '../engine/tape-session.js';
import { copyTape } from '../tape/stores/copy-tape.js';
import { createDirStore } from '../tape/stores/dir-store.js';
import { openStore } from '../tape/stores/open-store.js';
import type { ResolvedTape, TapeStore } from '../tape/store.js';
import { stringValue, type Command, type CommandContext } from './shared/command.js';
import { commandConfig } from './shared/store-options.js';
import { keyOptions } from './shared/serve-options.js';
import { notice } from './shared/notice.js';

const OPTIONS = {
  dir: { type: 'string' },
  // The shared store, as every command names it; `--to` (push) / `--from` (pull) say the same in the transfer's words.
  store: { type: 'string' },
  namespace: { type: 'string' },
  config: { type: 'string' },
  overwrite: { type: 'boolean' },
} as const;

export const pushCommand: Command = {
  name: 'push',
  summary: 'copy tapes from the tape folder to a shared store (PostgreSQL), exactly',
  usage: [
    'tapedeck push REF... --to URL [--dir DIR] [--namespace NS] [--config FILE] [--overwrite]',
    '',
    '  REF              a tape in DIR: a name, latest, a unique prefix, or a path to a .jsonl',
    '  --to URL         the store: postgres://USER@HOST:PORT/DB (?namespace=NS keeps teams apart); --store URL says',
    '                   the same',
    '  --dir DIR        the tape folder to copy from (default ./tapes, or TAPEDECK_DIR)',
    '  --namespace NS   the namespace in the store (over the URL)',
    '  --config FILE    a config file (YAML or JSON) over the built-in defaults (its dir: is the folder)',
    '  --overwrite      replace a tape that is already in the store (refused otherwise: nothing is copied, exit 2)',
  ].join('\n'),
  options: { ...OPTIONS, to: { type: 'string' } },
  allowPositionals: true,
  run: (ctx) => transfer(ctx, 'push'),
};

export const pullCommand: Command = {
  name: 'pull',
  summary: 'copy tapes from a shared store (PostgreSQL) into the tape folder, exactly',
  usage: [
    'tapedeck pull REF... --from URL [--dir DIR] [--namespace NS] [--config FILE] [--overwrite]',
    '',
    '  REF              a tape in the store: a name, latest, latest-replay or a unique prefix',
    '  --from URL       the store: postgres://USER@HOST:PORT/DB (?namespace=NS keeps teams apart); --store URL says',
    '                   the same',
    '  --dir DIR        the tape folder to copy into (default ./tapes, or TAPEDECK_DIR)',
    '  --namespace NS   the namespace in the store (over the URL)',
    '  --config FILE    a config file (YAML or JSON) over the built-in defaults (its dir: is the folder)',
    '  --overwrite      replace a tape that is already in the folder (refused otherwise: nothing is copied, exit 2)',
  ].join('\n'),
  options: { ...OPTIONS, from: { type: 'string' } },
  allowPositionals: true,
  run: (ctx) => transfer(ctx, 'pull'),
};

async function transfer(ctx: CommandContext, way: 'push' | 'pull'): Promise<number> {
  const flag = way === 'push' ? 'to' : 'from';
  const given = stringValue(ctx.values, flag);
  const store = stringValue(ctx.values, 'store');
  if (given !== undefined && store !== undefined && given !== store)
    throw new TapedeckError('BAD_ARGS', `--${flag} and --store name two stores: give one`);
  const url = given ?? store;
  if (url === undefined) throw new TapedeckError('BAD_ARGS', `--${flag} URL is required (postgres://USER@HOST:PORT/DB)`);
  if (ctx.positionals.length === 0)
    throw new TapedeckError('BAD_ARGS', `usage: tapedeck ${way} REF... --${flag} URL [--dir DIR] [--overwrite]`);
  // The folder's settings (--dir, --config, TAPEDECK_DIR); the store is the one named here, not a configured one.
  const config = commandConfig({ ...ctx, values: { ...ctx.values, store: undefined } });
  // A store indexes recordings by the key replay matches with (the config's ignored fields and secret rules).
  const key = keyOptions(config);
  const folder = createDirStore(config.dir);
  const shared = await openStore({ dir: config.dir, store: url, namespace: stringValue(ctx.values, 'namespace') });
  try {
    const [from, to] = way === 'push' ? [folder, shared] : [shared, folder];
    const refs: ResolvedTape[] = [];
    for (const ref of ctx.positionals) refs.push(await from.resolve(ref, { includeReplays: true }));
    const overwrite = ctx.values.overwrite === true;
    if (!overwrite) {
      const there = [];
      for (const ref of refs) if (await to.has(ref.name)) there.push(ref.name);
      if (there.length > 0)
        throw new TapedeckError('TAPE_EXISTS', `${there.map((n) => `"${n}"`).join(', ')} already in ${to.location}: nothing copied`, {
          details: { tapes: there },
        });
    }
    for (const ref of refs) {
      const copied = await copyTape(ref.store, ref.name, to, { overwrite, indexKey: (ex) => indexKey(ex, key) });
      for (const p of copied.problems) notice(ctx, `${ref.name} line ${p.line}: ${p.message}`, 'warn', `tapedeck ${way}`);
      ctx.stdout.write(`${way === 'push' ? 'pushed' : 'pulled'} ${ref.name} (${copied.exchanges} exchange(s)) to ${copied.to}\n`);
    }
    return 0;
  } finally {
    await closeAll([folder, shared]);
  }
}

async function closeAll(stores: TapeStore[]): Promise<void> {
  for (const s of stores) await s.close();
}
