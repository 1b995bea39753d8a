import { priceTable } from '../config/prices.js';
import { costReport, renderCostReport } from '../inspect/cost-report.js';
import { outputWidth } from '../inspect/format.js';
import { TapedeckError } from '../errors.js';
import { stringList, type Command } from './command.js';
import { commandConfig, loadTapeRef, STORE_OPTIONS, STORE_USAGE } from './store-options.js';

export const costCommand: Command = {
  name: 'cost',
  summary: 'what a recorded run cost, and what the same tokens would cost on other models (no calls made)',
  usage: [
    'tapedeck cost NAME [--as MODEL]... [--dir DIR | --store URL] [--config FILE] [--json]',
    '',
    '  NAME         a tape (a name, a unique prefix, latest, or a path to a .jsonl)',
    '  --as MODEL   also price every LLM call of the tape on MODEL (repeatable); a model without a price is "-"',
    '  --json       print {tape, models, calls: [{call, id, model, tokens, recorded, as}], total, unknownPrices}',
    STORE_USAGE,
  ].join('\n'),
  options: { ...STORE_OPTIONS, json: { type: 'boolean' }, as: { type: 'string', multiple: true } },
  allowPositionals: true,
  async run(ctx) {
    const [name, ...extra] = ctx.positionals;
    if (name === undefined || extra.length > 0) throw new TapedeckError('BAD_ARGS', 'usage: tapedeck cost NAME [--as MODEL]... [--json]');
    const as = stringList(ctx.values, 'as');
    for (const m of as) if (m.trim() === '') throw new TapedeckError('BAD_ARGS', '--as needs a model name');
    const config = commandConfig(ctx);
    const tape = await loadTapeRef(config, name);
    for (const p of tape.problems) ctx.stderr.write(`tapedeck cost: ${tape.name}: line ${p.line}: ${p.message}\n`);
    const report = costReport(tape, [...new Set(as)], priceTable(config.prices));
    if (ctx.values.json === true) ctx.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else ctx.stdout.write(renderCostReport(report, outputWidth(ctx.stdout), usd).join('\n') + '\n');
    return 0;
  },
};

/** Dollars with enough digits for one call (a few hundred tokens cost fractions of a cent); unknown is "-". */
function usd(value: number | null): string {
  if (value === null) return '-';
  if (value === 0) return '$0';
  return value < 0.01 ? `$${value.toFixed(6)}` : `$${value.toFixed(4)}`;
}
