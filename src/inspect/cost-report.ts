/**
 * Cost without calls: what a recorded run cost, and what the same token counts would cost on other models, call
 * by call and in total, from the price table. An unknown price is null, never 0; a total is null when any call in
 * it is unknown.
 */
import type { PriceMap } from '../config/prices.js';
import type { LoadedTape } from '../tape/tape-reader.js';
import { usageCost } from './cost.js';
import { PLAIN_STYLE, type Style } from './format.js';
import { orderExchanges } from './steps.js';

export interface CostCall {
  /** 0-based index among the tape's LLM calls, and the exchange id. */
  call: number;
  id: string;
  model: string | null;
  tokens: { input: number; cachedInput: number; output: number };
  /** USD as recorded (the recorded model's price), null when unknown (no usage, or no price). */
  recorded: number | null;
  /** USD of the same tokens on each `--as` model, null when that model has no price (or no usage was reported). */
  as: Record<string, number | null>;
}

export interface CostReport {
  tape: string;
  models: string[];
  calls: CostCall[];
  total: { recorded: number | null; as: Record<string, number | null>; tokens: { input: number; cachedInput: number; output: number } };
  /** Models (recorded or asked for) the price table does not know. */
  unknownPrices: string[];
}

export function costReport(tape: LoadedTape, as: readonly string[], table: PriceMap): CostReport {
  const calls: CostCall[] = [];
  const unknown = new Set<string>();
  for (const ex of orderExchanges(tape.exchanges)) {
    const llm = ex.llm;
    if (llm === undefined || llm.api === 'embeddings') continue;
    const u = llm.usage;
    const recorded = usageCost(u, llm.model, table);
    if (recorded === null && u !== undefined) unknown.add(llm.model ?? '(no model)');
    const perModel: Record<string, number | null> = {};
    for (const m of as) {
      perModel[m] = usageCost(u, m, table);
      if (perModel[m] === null && u !== undefined) unknown.add(m);
    }
    calls.push({
      call: calls.length,
      id: ex.id,
      model: llm.model ?? null,
      tokens: { input: u?.inputTokens ?? 0, cachedInput: u?.cachedInputTokens ?? 0, output: u?.outputTokens ?? 0 },
      recorded,
      as: perModel,
    });
  }
  const sum = (values: (number | null)[]): number | null =>
    values.some((v) => v === null) ? null : Math.round(values.reduce<number>((a, v) => a + (v ?? 0), 0) * 1e9) / 1e9;
  return {
    tape: tape.name,
    models: [...as],
    calls,
    total: {
      recorded: sum(calls.map((c) => c.recorded)),
      as: Object.fromEntries(as.map((m) => [m, sum(calls.map((c) => c.as[m] ?? null))])),
      tokens: {
        input: calls.reduce((a, c) => a + c.tokens.input, 0),
        cachedInput: calls.reduce((a, c) => a + c.tokens.cachedInput, 0),
        output: calls.reduce((a, c) => a + c.tokens.output, 0),
      },
    },
    unknownPrices: [...unknown],
  };
}

/** The report as a table: one row per call, a total row, and which prices are unknown. */
export function renderCostReport(r: CostReport, width: number, fmt: (usd: number | null) => string, style: Style = PLAIN_STYLE): string[] {
  const heads = ['recorded', ...r.models];
  const money = Math.max(10, ...heads.map((h) => h.length));
  const model = Math.max(5, Math.min(28, Math.max(0, ...r.calls.map((c) => (c.model ?? '-').length))));
  const cells = (recorded: number | null, as: Record<string, number | null>): string =>
    [recorded, ...r.models.map((m) => as[m] ?? null)].map((v) => fmt(v).padStart(money)).join(' ');
  const fitLine = (l: string): string => (l.length > width ? `${l.slice(0, width - 3)}...` : l);
  const out = [
    style.bold(
      fitLine(
        `${r.tape}: ${r.calls.length} LLM call(s), USD from the price table${r.models.length > 0 ? ` (the same tokens on ${r.models.join(', ')})` : ''}`,
      ),
    ),
    '',
    style.dim(
      fitLine(
        `  ${'#'.padEnd(4)}${'model'.padEnd(model)} ${'tokens in→out'.padStart(15)} ${heads.map((h) => h.padStart(money)).join(' ')}`,
      ),
    ),
  ];
  for (const c of r.calls)
    out.push(
      fitLine(
        `  ${String(c.call).padEnd(4)}${(c.model ?? '-').slice(0, model).padEnd(model)} ${`${c.tokens.input}→${c.tokens.output}`.padStart(15)} ${cells(c.recorded, c.as)}`,
      ),
    );
  const t = r.total.tokens;
  out.push(
    style.bold(fitLine(`  ${'total'.padEnd(4 + model)} ${`${t.input}→${t.output}`.padStart(15)} ${cells(r.total.recorded, r.total.as)}`)),
  );
  if (r.unknownPrices.length > 0)
    out.push('', style.yellow(fitLine(`no price for ${r.unknownPrices.join(', ')}: shown as "-" (unknown, not 0)`)));
  return out;
}
