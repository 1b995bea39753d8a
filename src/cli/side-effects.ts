import { existsSync, writeFileSync } from 'node:fs';
import { TapedeckError } from '../errors.js';
import { renderSideEffectsFile, suggestSideEffects } from '../replay/side-effects-init.js';
import { stringValue, type Command } from './shared/command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { notice } from './shared/notice.js';
import { requiredTape, TAPE_OPTION } from './shared/tape-arg.js';

export const sideEffectsCommand: Command = {
  name: 'side-effects',
  summary: 'suggest a side-effects file (which tools must never run in replay) from what a tape saw',
  usage: [
    'tapedeck side-effects init NAME [--out FILE] [--dir DIR | --store URL] [--force]',
    '',
    '  NAME          tape to read tool lists and calls from (a name, a prefix, latest, a path); --tape NAME says the same',
    '  --out FILE    where to write the suggestions (default side_effects.yaml; "-" prints them)',
    '  --force       overwrite FILE if it exists',
    'Suggestions come from MCP tool annotations first, then name and description keywords; each line says why.',
    'The file is written with done: false: review it, then set done: true (tapedeck replay --side-effects FILE).',
    STORE_USAGE,
  ].join('\n'),
  options: {
    ...TAPE_OPTION,
    out: { type: 'string', short: 'o' },
    ...STORE_OPTIONS,
    force: { type: 'boolean' },
  },
  allowPositionals: true,
  async run(ctx) {
    const [sub, ...named] = ctx.positionals;
    const usage = 'tapedeck side-effects init NAME [--out FILE]';
    if (sub !== 'init') throw new TapedeckError('BAD_ARGS', `usage: ${usage}${sub !== undefined ? ` (unknown subcommand "${sub}")` : ''}`);
    const tape = requiredTape(ctx, usage, named);
    const loaded = await withStore(commandConfig(ctx), async (store) => {
      const ref = await store.resolve(tape);
      return ref.store.load(ref.name, { resolveFiles: false });
    });
    const suggestions = suggestSideEffects(loaded.exchanges);
    const text = renderSideEffectsFile(loaded.name, suggestions);
    const out = stringValue(ctx.values, 'out') ?? 'side_effects.yaml';
    if (out === '-') {
      ctx.stdout.write(text);
      return 0;
    }
    if (existsSync(out) && ctx.values.force !== true)
      throw new TapedeckError('BAD_ARGS', `${out} exists: pass --force to overwrite it, or --out another file`);
    writeFileSync(out, text);
    const effects = suggestions.tools.filter((t) => !t.safe).length;
    notice(
      ctx,
      `wrote ${out}: ${suggestions.tools.length} tool(s), ${effects} suggested as side effects, ` +
        `${suggestions.http.length} HTTP route(s); review it, then set done: true`,
    );
    return 0;
  },
};
