import { priceTable } from '../config/prices.js';
import { TapedeckError } from '../errors.js';
import { createUsageCostFn } from '../inspect/cost.js';
import { fit, formatCost, formatMs, styleFor } from '../inspect/format.js';
import { listTapes, type TapeListing, type TapeSummary } from '../inspect/summary.js';
import { visibleText } from '../inspect/visible-text.js';
import { parseAge } from '../tape/stores/housekeeping.js';
import type { TapeQuery } from '../tape/store.js';
import type { Command } from './shared/command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { layoutWidth, WIDTH_OPTIONS, WIDTH_USAGE } from './shared/width-options.js';
import { notice } from './shared/notice.js';

export const listCommand: Command = {
  name: 'list',
  summary: 'list tapes with their calls, tokens, cost, duration (replays under their recording); filter and page them',
  usage: [
    'tapedeck list [PREFIX] [--model M] [--tool T] [--since AGE] [--mode record|replay] [--limit N] [--after NAME]',
    '              [--dir DIR | --store URL] [--json] [--width N | --wide]',
    '',
    '  PREFIX               only tapes whose name starts with it',
    '  --model M            only tapes with an LLM call on model M (as recorded)',
    '  --tool T             only tapes that called tool T (an MCP tools/call, or a tool call the model asked for)',
    '  --since AGE          only tapes created in the last AGE (30d, 12h, 90m)',
    '  --mode MODE          only recordings (record) or only replays (replay)',
    '  --limit N            at most N tapes; the last line says how to get the next page (--after NAME)',
    '  --json               print an array of objects (name, createdAt, exchanges, llmCalls, toolCalls, tokens, cost, ...)',
    STORE_USAGE,
    WIDTH_USAGE,
  ].join('\n'),
  options: {
    ...STORE_OPTIONS,
    json: { type: 'boolean' },
    model: { type: 'string' },
    tool: { type: 'string' },
    since: { type: 'string' },
    mode: { type: 'string' },
    limit: { type: 'string' },
    after: { type: 'string' },
    ...WIDTH_OPTIONS,
  },
  allowPositionals: true,
  async run(ctx) {
    const query = queryOf(ctx.values, ctx.positionals);
    const config = commandConfig(ctx);
    return withStore(config, async (store) => {
      const page = await listTapes(store, query, { usageCost: createUsageCostFn(priceTable(config.prices)) });
      if (ctx.values.json === true) {
        const tapes = page.tapes.map((r) => (r.ok ? r.summary : { name: r.name, error: r.error }));
        ctx.stdout.write(JSON.stringify(tapes, null, 2) + '\n');
        if (page.next !== undefined) notice(ctx, `more tapes: add --after ${visibleText(page.next)}`, 'plain', 'tapedeck list');
        return 0;
      }
      const width = layoutWidth(ctx);
      const style = styleFor(ctx.stdout, ctx.env);
      if (page.tapes.length === 0) {
        ctx.stdout.write(`no tapes${filtered(query) ? ' match' : ''} in ${store.location}\n`);
        return 0;
      }
      // Every line is text read from the store (names, models, errors): its control characters are shown, never sent.
      const line = (text: string): string => fit(visibleText(text), width);
      for (const { row, depth } of grouped(page.tapes)) {
        const pad = '  '.repeat(depth);
        if (!row.ok) {
          ctx.stdout.write(style.red(line(`${pad}! ${row.name}: unreadable: ${row.error}`)) + '\n');
          continue;
        }
        const [head, ...facts] = summaryLines(row.summary, pad);
        ctx.stdout.write(`${style.bold(line(head as string))}\n${facts.map((l) => `${line(l)}\n`).join('')}`);
        for (const p of row.summary.problems) ctx.stdout.write(style.yellow(line(`${pad}    ! line ${p.line}: ${p.message}`)) + '\n');
      }
      if (page.next !== undefined) ctx.stdout.write(style.dim(`more: add --after ${visibleText(page.next)}`) + '\n');
      return 0;
    });
  },
};

function queryOf(values: Record<string, unknown>, positionals: string[]): TapeQuery {
  if (positionals.length > 1) throw new TapedeckError('BAD_ARGS', 'usage: tapedeck list [PREFIX] [--model M] [--tool T] [--since AGE] ...');
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const mode = str('mode');
  if (mode !== undefined && mode !== 'record' && mode !== 'replay')
    throw new TapedeckError('BAD_ARGS', `--mode must be record or replay (got "${mode}")`);
  const limitText = str('limit');
  if (limitText !== undefined && !/^[1-9]\d*$/.test(limitText))
    throw new TapedeckError('BAD_ARGS', `--limit needs a positive whole number (got "${limitText}")`);
  const since = str('since');
  const q: TapeQuery = {};
  if (positionals[0] !== undefined) q.prefix = positionals[0];
  if (mode !== undefined) q.mode = mode;
  if (str('model') !== undefined) q.model = str('model') as string;
  if (str('tool') !== undefined) q.tool = str('tool') as string;
  if (since !== undefined) q.since = new Date(Date.now() - parseAge(since));
  if (limitText !== undefined) q.limit = Number(limitText);
  if (str('after') !== undefined) q.after = str('after') as string;
  return q;
}

function filtered(q: TapeQuery): boolean {
  return q.prefix !== undefined || q.mode !== undefined || q.model !== undefined || q.tool !== undefined || q.since !== undefined;
}

/** Rows in name order, each replay placed under its recording when that is listed too. */
function grouped(rows: TapeListing[]): { row: TapeListing; depth: number }[] {
  const names = new Set(rows.map((r) => (r.ok ? r.summary.name : r.name)));
  const replaysOf = new Map<string, TapeListing[]>();
  const top: TapeListing[] = [];
  for (const r of rows) {
    const of = r.ok ? r.summary.replayOf?.tape : undefined;
    if (of !== undefined && names.has(of) && of !== (r.ok ? r.summary.name : r.name)) {
      const list = replaysOf.get(of) ?? [];
      list.push(r);
      replaysOf.set(of, list);
    } else top.push(r);
  }
  const out: { row: TapeListing; depth: number }[] = [];
  const add = (r: TapeListing, depth: number, seen: Set<string>): void => {
    const name = r.ok ? r.summary.name : r.name;
    if (seen.has(name)) return;
    seen.add(name);
    out.push({ row: r, depth });
    for (const child of replaysOf.get(name) ?? []) add(child, depth + 1, seen);
  };
  const seen = new Set<string>();
  for (const r of top) add(r, 0, seen);
  return out;
}

function summaryLines(s: TapeSummary, pad: string): string[] {
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
  const lines = [`${pad}${s.name}  ${s.createdAt.replace('T', ' ').slice(0, 19)}`, `${pad}    ${facts.join(' · ')}`];
  if (s.matches) {
    const m = s.matches;
    lines.push(
      `${pad}    replay of ${s.replayOf?.tape ?? '?'} (on-miss ${s.replayOf?.onMiss ?? '?'}): ` +
        `exact ${m.exact} · semantic ${m.semantic} · live ${m.live} · blocked ${m.blocked} · miss ${m.miss}` +
        (m.mock > 0 ? ` · mock ${m.mock}` : '') +
        ((m.fault ?? 0) > 0 ? ` · fault ${m.fault}` : ''),
    );
  }
  return lines;
}
