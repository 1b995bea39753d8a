import { existsSync, writeFileSync } from 'node:fs';
import { TapedeckError } from '../errors.js';
import { renderSideEffectsFile, suggestSideEffects } from '../replay/side-effects-init.js';
import { stringValue, type Command } from './command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './store-options.js';

export const sideEffectsCommand: Command = {
  name: 'side-effects',
  summary: 'suggest a side-effects file (which tools must never run in replay) from what a tape saw',
  usage: [
    'tapedeck side-effects init --tape NAME [--out FILE] [--dir DIR | --store URL] [--force]',
    '',
    '  --tape NAME   tape to read tool lists and calls from',
    '  --out FILE    where to write the suggestions (default side_effects.yaml; "-" prints them)',
    '  --force       overwrite FILE if it exists',
    'Suggestions come from MCP tool annotations first, then name and description keywords; each line says why.',
    'The file is written with done: false: review it, then set done: true (tapedeck replay --side-effects FILE).',
    STORE_USAGE,
  ].join('\n'),
  options: {
    tape: { type: 'string', short: 't' },
    out: { type: 'string', short: 'o' },
    ...STORE_OPTIONS,
    force: { type: 'boolean' },
  },
  allowPositionals: true,
  async run(ctx) {
    const [sub, ...extra] = ctx.positionals;
    if (sub !== 'init' || extra.length > 0)
      throw new TapedeckError(
        'BAD_ARGS',
        `usage: tapedeck side-effects init --tape NAME [--out FILE]${sub !== undefined && sub !== 'init' ? ` (unknown subcommand "${sub}")` : ''}`,
      );
    const tape = stringValue(ctx.values, 'tape');
    if (tape === undefined) throw new TapedeckError('BAD_ARGS', '--tape NAME is required');
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
    ctx.stderr.write(
      `tapedeck: wrote ${out}: ${suggestions.tools.length} tool(s), ${effects} suggested as side effects, ` +
        `${suggestions.http.length} HTTP route(s); review it, then set done: true\n`,
    );
    return 0;
  },
};
