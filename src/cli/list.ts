import { loadConfig } from '../config/config.js';
import { priceTable } from '../config/prices.js';
import { createCostFn } from '../inspect/cost.js';
import { fit, formatCost, formatMs, styleFor } from '../inspect/format.js';
import { listTapes, type TapeSummary } from '../inspect/summary.js';
import { stringValue, type Command } from './command.js';
import { layoutWidth, WIDTH_OPTIONS, WIDTH_USAGE } from './width-options.js';

export const listCommand: Command = {
  name: 'list',
  summary: 'list every tape with its calls, tokens, cost, duration (and how replay tapes were served)',
  usage: [
    'tapedeck list [--dir DIR] [--json] [--width N | --wide]',
    '',
    '  --json               print an array of objects (name, createdAt, exchanges, llmCalls, toolCalls, tokens, cost, ...)',
    WIDTH_USAGE,
  ].join('\n'),
  options: { dir: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' }, ...WIDTH_OPTIONS },
  async run(ctx) {
    const config = loadConfig(stringValue(ctx.values, 'config'), { dir: stringValue(ctx.values, 'dir') }, ctx.env);
    const rows = await listTapes(config.dir, { costOf: createCostFn(priceTable(config.prices)) });
    if (ctx.values.json === true) {
      const json = rows.map((r) => (r.ok ? r.summary : { name: r.name, error: r.error }));
      ctx.stdout.write(JSON.stringify(json, null, 2) + '\n');
      return 0;
    }
    const width = layoutWidth(ctx);
    const style = styleFor(ctx.stdout, ctx.env);
    if (rows.length === 0) {
      ctx.stdout.write(`no tapes in ${config.dir}\n`);
      return 0;
    }
    for (const r of rows) {
      if (!r.ok) {
        ctx.stdout.write(style.red(fit(`! ${r.name}: unreadable: ${r.error}`, width)) + '\n');
        continue;
      }
      for (const line of summaryLines(r.summary, width)) ctx.stdout.write(line + '\n');
      for (const p of r.summary.problems) ctx.stdout.write(style.yellow(fit(`    ! line ${p.line}: ${p.message}`, width)) + '\n');
    }
    return 0;
  },
};

function summaryLines(s: TapeSummary, width: number): string[] {
  const cost =
    s.cost === null ? 'cost -' : `${formatCost(s.cost)}${s.costedCalls < s.llmCalls ? ` (${s.costedCalls}/${s.llmCalls} priced)` : ''}`;
  const facts = [
    `${s.exchanges} exchanges`,
    `${s.llmCalls} LLM`,
    `${s.toolCalls} tool`,
    `${s.tokens.total} tok`,
    cost,
    formatMs(s.durationMs),
  ];
  if (s.errors > 0) facts.push(`${s.errors} error(s)`);
  const lines = [fit(`${s.name}  ${s.createdAt.replace('T', ' ').slice(0, 19)}`, width), fit(`    ${facts.join(' · ')}`, width)];
  if (s.matches) {
    const m = s.matches;
    lines.push(
      fit(
        `    replay of ${s.replayOf?.tape ?? '?'} (on-miss ${s.replayOf?.onMiss ?? '?'}): ` +
          `exact ${m.exact} · semantic ${m.semantic} · live ${m.live} · blocked ${m.blocked} · miss ${m.miss}`,
        width,
      ),
    );
  }
  return lines;
}
