import { priceTable } from '../config/prices.js';
import { costReport, renderCostReport } from '../inspect/cost-report.js';
import { styleFor } from '../inspect/format.js';
import { TapedeckError } from '../errors.js';
import { stringList, type Command } from './shared/command.js';
import { commandConfig, loadTapeRef, STORE_OPTIONS, STORE_USAGE } from './shared/store-options.js';
import { notice } from './shared/notice.js';
import { requiredTape, TAPE_OPTION } from './shared/tape-arg.js';
import { layoutWidth, WIDTH_OPTIONS, WIDTH_USAGE } from './shared/width-options.js';

export const costCommand: Command = {
  name: 'cost',
  summary: 'what a recorded run cost, and what the same tokens would cost on other models (no calls made)',
  usage: [
    'tapedeck cost NAME [--as MODEL]... [--dir DIR | --store URL] [--config FILE] [--json] [--width N | --wide]',
    '',
    '  NAME         a tape (a name, a unique prefix, latest, or a path to a .jsonl); --tape NAME says the same',
    '  --as MODEL   also price every LLM call of the tape on MODEL (repeatable); a model without a price is "-"',
    '  --json       print {tape, models, calls: [{call, id, model, tokens, recorded, as}], total, unknownPrices}',
    STORE_USAGE,
    WIDTH_USAGE,
  ].join('\n'),
  options: { ...STORE_OPTIONS, ...TAPE_OPTION, json: { type: 'boolean' }, as: { type: 'string', multiple: true }, ...WIDTH_OPTIONS },
  allowPositionals: true,
  async run(ctx) {
    const name = requiredTape(ctx, 'tapedeck cost NAME [--as MODEL]... [--json]');
    const width = layoutWidth(ctx);
    const as = stringList(ctx.values, 'as');
    for (const m of as) if (m.trim() === '') throw new TapedeckError('BAD_ARGS', '--as needs a model name');
    const config = commandConfig(ctx);
    const tape = await loadTapeRef(config, name);
    for (const p of tape.problems) notice(ctx, `${tape.name}: line ${p.line}: ${p.message}`, 'warn', 'tapedeck cost');
    const report = costReport(tape, [...new Set(as)], priceTable(config.prices));
    if (ctx.values.json === true) ctx.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else ctx.stdout.write(renderCostReport(report, width, usd, styleFor(ctx.stdout, ctx.env)).join('\n') + '\n');
    return 0;
  },
};

/** Dollars with enough digits for one call (a few hundred tokens cost fractions of a cent); unknown is "-". */
function usd(value: number | null): string {
  if (value === null) return '-';
  if (value === 0) return '$0';
  return value < 0.01 ? `$${value.toFixed(6)}` : `$${value.toFixed(4)}`;
}
