/** What an LLM exchange cost, from the price table (`config/prices.ts`). An unknown price is `null`, never 0. */
import { defaultPrices, priceFor, type PriceMap } from '../config/prices.js';
import type { Exchange, Usage } from '../tape/schema.js';

/** Cost of one exchange in USD, or null when it is unknown (no price for the model, no usage). */
export type CostFn = (exchange: Exchange) => number | null;

/**
 * USD cost of one LLM exchange: uncached input at `input`, cached input at `cachedInput` (or `input`), output at
 * `output`, per million tokens. Null when it is unknown: not an LLM call, no usage reported, or no price for its model.
 */
export function costOf(ex: Exchange, table: PriceMap = defaultPrices()): number | null {
  return usageCost(ex.llm?.usage, ex.llm?.model, table);
}

/** USD for token counts on a model (the recorded one, or another: `tapedeck cost --as`); null when either is unknown. */
export function usageCost(usage: Usage | undefined, model: string | undefined, table: PriceMap = defaultPrices()): number | null {
  if (usage === undefined) return null;
  const found = priceFor(model, table);
  if (found === null) return null;
  const { price } = found;
  const input = usage.inputTokens ?? 0;
  const cached = Math.min(usage.cachedInputTokens ?? 0, input);
  const usd =
    ((input - cached) * price.input + cached * (price.cachedInput ?? price.input) + (usage.outputTokens ?? 0) * price.output) / 1_000_000;
  return Math.round(usd * 1e9) / 1e9;
}

/** A `CostFn` over a given table, for `diffRuns` and the viewer's compare. */
export function createCostFn(table: PriceMap = defaultPrices()): CostFn {
  return (ex) => costOf(ex, table);
}

/** USD for token counts on a model; null when unknown. What tape summaries price their per-model totals with. */
export type UsageCostFn = (usage: Usage | undefined, model: string | undefined) => number | null;

export function createUsageCostFn(table: PriceMap = defaultPrices()): UsageCostFn {
  return (usage, model) => usageCost(usage, model, table);
}
