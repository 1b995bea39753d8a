/**
 * The one place where the viewer and the exporters use the inspector: every call into `src/inspect/` goes
 * through here, so a change in how inspect models a tape (steps, state, debrief, diff, prices) is adapted in this
 * file alone. Steps are read through `index` and `exchange` only; everything else is computed from the exchange.
 */
import type { Config } from '../config/config.js';
import { conversationOf, type ConversationMessage } from '../inspect/conversation.js';
import { createCostFn, priceTable } from '../inspect/cost.js';
import { debrief, type Debrief } from '../inspect/debrief.js';
import { diffRuns, runOf, type Run, type RunDiff } from '../inspect/diff.js';
import { withMeaning } from '../inspect/load.js';
import { stepState, type StepState } from '../inspect/step-state.js';
import { orderExchanges, toSteps, type Step } from '../inspect/steps.js';
import { summarizeTape, type CostFn, type TapeSummary } from '../inspect/summary.js';
import { timelineRow, type TimelineRow } from '../inspect/timeline.js';
import type { Exchange } from '../tape/schema.js';
import type { LoadedTape } from '../tape/tape-reader.js';

export type { Debrief, Run, RunDiff, Step, StepState, TapeSummary, CostFn, TimelineRow };
export type { ConversationMessage };
export type { ToolCallEntry, ToolEdit } from '../inspect/tool-sequence.js';

/** The cost function for the configured price table (built-in prices merged with the config's). */
export function costFnFor(prices: Config['prices']): CostFn {
  return createCostFn(priceTable(prices));
}

/** Exchanges with their LLM meaning (described now for tapes recorded before the provider was known), in timeline order. */
export function timelineOf(exchanges: readonly Exchange[]): Exchange[] {
  return orderExchanges(withMeaning([...exchanges]));
}

/** A tape's steps: its exchanges with meaning, in timeline order. */
export function stepsOf(exchanges: readonly Exchange[]): Step[] {
  return toSteps(withMeaning([...exchanges]));
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

export function summaryOf(tape: LoadedTape, costOf: CostFn): TapeSummary {
  return summarizeTape(tape, { costOf });
}

/** Two runs as the diff sees them (compared steps, tool sequences) and their diff. */
export function compareRuns(a: LoadedTape, b: LoadedTape, costOf: CostFn): { a: Run; b: Run; diff: RunDiff } {
  const ra = runOf(a);
  const rb = runOf(b);
  return { a: ra, b: rb, diff: diffRuns(ra, rb, { costOf }) };
}

/** The conversation an LLM request body carries (any provider's shape), as one flat list of messages. */
export function conversationIn(body: unknown): ConversationMessage[] {
  return conversationOf(body);
}
