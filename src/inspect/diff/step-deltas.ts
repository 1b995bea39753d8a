/**
 * Two runs compared LLM call by LLM call (Prela's span-by-span comparison): the i-th LLM call of the original
 * against the i-th of the replay, with how alike their outputs are and the token, cost and duration deltas. A call
 * only one run made is compared against nothing (its tokens, cost and duration count in full; similarity null).
 */
import type { Exchange } from '../../tape/schema.js';
import type { CostFn } from '../cost.js';
import type { Step } from '../steps.js';
import type { OutputSimilarity } from './similarity.js';

/** What the deltas read of a run (a `Run` of diff.ts). */
export interface RunSteps {
  steps: readonly Step[];
  finalOutput: string | null;
}

export interface StepDelta {
  /** 0-based index among the LLM calls. */
  call: number;
  /** The call's step number on each tape, as `tapedeck show` numbers it (`null` when that run made no such call). */
  step: number | null;
  replayStep: number | null;
  /** Each side's model (`null` when that run made no such call). */
  original: string | null;
  replay: string | null;
  /** How alike the two calls' output texts are; null when one run made no such call. */
  outputSimilarity: number | null;
  /** Total tokens, replay minus original. */
  tokensDelta: number;
  /** USD, replay minus original; null when a side with usage has no known price. */
  costDelta: number | null;
  durationDeltaMs: number;
}

export function stepDeltas(a: RunSteps, b: RunSteps, opts: { costOf: CostFn; similarity: OutputSimilarity }): StepDelta[] {
  const sa = llmSteps(a);
  const sb = llmSteps(b);
  const ca = sa.map((s) => s.exchange);
  const cb = sb.map((s) => s.exchange);
  const out: StepDelta[] = [];
  for (let i = 0; i < Math.max(ca.length, cb.length); i++) {
    const x = ca[i];
    const y = cb[i];
    const cx = costOrZero(x, opts.costOf);
    const cy = costOrZero(y, opts.costOf);
    out.push({
      call: i,
      step: sa[i]?.index ?? null,
      replayStep: sb[i]?.index ?? null,
      original: x === undefined ? null : (x.llm?.model ?? x.llm?.api ?? '?'),
      replay: y === undefined ? null : (y.llm?.model ?? y.llm?.api ?? '?'),
      outputSimilarity: x === undefined || y === undefined ? null : opts.similarity.of(x.llm?.outputText ?? '', y.llm?.outputText ?? ''),
      tokensDelta: totalTokens(y) - totalTokens(x),
      costDelta: cx === null || cy === null ? null : Math.round((cy - cx) * 1e9) / 1e9,
      durationDeltaMs: Math.round((y?.timing.durationMs ?? 0) - (x?.timing.durationMs ?? 0)),
    });
  }
  return out;
}

/** The output texts of the calls paired by `stepDeltas`, for a similarity that is computed ahead (embeddings). */
export function pairedOutputs(a: RunSteps, b: RunSteps): [string, string][] {
  const ca = llmCalls(a);
  const cb = llmCalls(b);
  const pairs: [string, string][] = [[a.finalOutput ?? '', b.finalOutput ?? '']];
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) pairs.push([ca[i]?.llm?.outputText ?? '', cb[i]?.llm?.outputText ?? '']);
  return pairs;
}

function llmSteps(run: RunSteps): Step[] {
  return run.steps.filter((s) => s.kind === 'LLM');
}

function llmCalls(run: RunSteps): Exchange[] {
  return llmSteps(run).map((s) => s.exchange);
}

function totalTokens(ex: Exchange | undefined): number {
  const u = ex?.llm?.usage;
  if (u === undefined) return 0;
  return u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
}

function costOrZero(ex: Exchange | undefined, costOf: CostFn): number | null {
  if (ex?.llm?.usage === undefined) return 0;
  return costOf(ex);
}
