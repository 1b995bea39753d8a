/**
 * The one place where the viewer and the exporters use the inspector: every call into `src/inspect/` goes
 * through here, so a change in how inspect models a tape (steps, state, debrief, diff, prices) is adapted in this
 * file alone. Steps are read through `index` and `exchange` only; everything else is computed from the exchange.
 */
import type { Config } from '../config/config.js';
import { priceTable } from '../config/prices.js';
import { createCostFn, createUsageCostFn, type CostFn, type UsageCostFn } from '../inspect/cost.js';
import { debrief, type Debrief } from '../inspect/debrief.js';
import { diffRuns, runOf, stepLabel, type Run, type RunDiff } from '../inspect/diff/diff.js';
import { stepState, type StepState } from '../inspect/step-state.js';
import { orderExchanges, toSteps, type Step } from '../inspect/steps.js';
import { listingOf, type TapeListing, type TapeSummary } from '../inspect/summary.js';
import { conversationOf } from '../providers/describe.js';
import type { ConversationMessage } from '../providers/types.js';
import { timelineRow, type TimelineRow } from '../inspect/timeline.js';
import type { Exchange } from '../tape/schema.js';
import type { LoadedTape } from '../tape/tape-reader.js';

export type { Debrief, Run, RunDiff, Step, StepState, TapeSummary, TapeListing, CostFn, UsageCostFn, TimelineRow };
export { listingOf };
export type { ConversationMessage };
export type { ToolCallEntry, ToolEdit, EditMark } from '../inspect/diff/tool-sequence.js';
export type { StepKind } from '../inspect/steps.js';
export { editMarks } from '../inspect/diff/tool-sequence.js';

/** The cost function for the configured price table (built-in prices merged with the config's). */
export function costFnFor(prices: Config['prices']): CostFn {
  return createCostFn(priceTable(prices));
}

/** The same table, pricing per-model token totals (tape summaries). */
export function usageCostFnFor(prices: Config['prices']): UsageCostFn {
  return createUsageCostFn(priceTable(prices));
}

/** Exchanges in timeline order (their meaning is the one recorded on the tape). */
export function timelineOf(exchanges: readonly Exchange[]): Exchange[] {
  return orderExchanges(exchanges);
}

/** A tape's steps: views over its exchanges, in timeline order. */
export function stepsOf(exchanges: readonly Exchange[]): Step[] {
  return toSteps(exchanges);
}

/** How the diff names a compared step (`LLM gpt-4o`, `MCP tools/call echo`). */
export function labelOf(step: Step): string {
  return stepLabel(step);
}

/** What the timeline shows of a step: kind, target, arguments and result in short, tokens, status, match, error. */
export function rowOf(step: Step, max: number): TimelineRow {
  return timelineRow(step, max);
}

/** The conversation as the model saw it at step `index`, the tool results so far, and the exchange. */
export function stateAt(steps: readonly Step[], index: number): StepState {
  return stepState(steps, index);
}

export function debriefOf(steps: readonly Step[]): Debrief {
  return debrief(steps);
}

/** Two runs as the diff sees them (compared steps, tool sequences) and their diff. */
export function compareRuns(a: LoadedTape, b: LoadedTape, costOf: CostFn): { a: Run; b: Run; diff: RunDiff } {
  const ra = runOf(a);
  const rb = runOf(b);
  return { a: ra, b: rb, diff: diffRuns(ra, rb, { costOf }) };
}

/** The conversation an LLM call's model saw, read by its API's adapter, as one flat list of messages. */
export function conversationIn(ex: Exchange): ConversationMessage[] {
  return conversationOf(ex);
}
