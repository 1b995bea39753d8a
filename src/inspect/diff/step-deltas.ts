/**
 * Two runs compared LLM call by LLM call (Prela's span-by-span comparison): each LLM call of the original against
 * the replay's call it pairs with (`align.ts`: the same request, else the call at the same place between two that
 * are), with how alike their outputs are and the token, cost and duration deltas. A call only one run made is
 * compared against nothing (its tokens, cost and duration count in full; similarity null).
 */
import type { Exchange } from '../../tape/schema.js';
import type { CostFn } from '../cost.js';
import type { Step } from '../steps.js';
import { alignSteps, llmPairs, type StepPair } from './align.js';
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

export function stepDeltas(
  a: RunSteps,
  b: RunSteps,
  opts: { costOf: CostFn; similarity: OutputSimilarity; pairs?: readonly StepPair[] },
): StepDelta[] {
  const pairs = llmPairs(opts.pairs ?? alignSteps(a.steps, b.steps));
  return pairs.map(({ a: sa, b: sb }, i) => {
    const x = sa?.exchange;
    const y = sb?.exchange;
    const cx = costOrZero(x, opts.costOf);
    const cy = costOrZero(y, opts.costOf);
    return {
      call: i,
      step: sa?.index ?? null,
      replayStep: sb?.index ?? null,
      original: x === undefined ? null : (x.llm?.model ?? x.llm?.api ?? '?'),
      replay: y === undefined ? null : (y.llm?.model ?? y.llm?.api ?? '?'),
      outputSimilarity: x === undefined || y === undefined ? null : opts.similarity.of(x.llm?.outputText ?? '', y.llm?.outputText ?? ''),
      tokensDelta: totalTokens(y) - totalTokens(x),
      costDelta: cx === null || cy === null ? null : Math.round((cy - cx) * 1e9) / 1e9,
      durationDeltaMs: Math.round((y?.timing.durationMs ?? 0) - (x?.timing.durationMs ?? 0)),
    };
  });
}

/** The output texts of the calls paired by `stepDeltas`, for a similarity that is computed ahead (embeddings). */
export function pairedOutputs(a: RunSteps, b: RunSteps): [string, string][] {
  const pairs: [string, string][] = [[a.finalOutput ?? '', b.finalOutput ?? '']];
  for (const p of llmPairs(alignSteps(a.steps, b.steps)))
    if (p.a !== undefined && p.b !== undefined) pairs.push([p.a.exchange.llm?.outputText ?? '', p.b.exchange.llm?.outputText ?? '']);
  return pairs;
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
