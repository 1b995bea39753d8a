/**
 * Comparing two runs (typically a recorded run and its replay): tool-sequence edits, the first step where they
 * part, final outputs, token / cost / duration deltas (in total and LLM call by LLM call), configuration changes,
 * tapedeck's regression score and Kurral's ARS beside it.
 *
 * score = 0.5 * outputSimilarity + 0.5 * toolSequenceAgreement * callAgreement, in [0, 1], where
 *   outputSimilarity      = similarity of the final outputs: words (see similarity.ts) or embeddings when configured
 *   toolSequenceAgreement = LCS(tools A, tools B) / max(|tools A|, |tools B|), 1 when both runs call no tool
 *   callAgreement         = LLM calls both runs made / max(|LLM calls A|, |LLM calls B|), 1 when neither calls a
 *                           model: a call one run skipped (or added) costs agreement even when no tool moved.
 *
 * Steps are paired by what they asked (`align.ts`), not by position: a call one run skipped is named as removed.
 *
 * Per-run noise (exchange ids, timestamps, offsets, durations, JSON-RPC ids, how a replay found its answers) is
 * never compared, so a run diffed against its own exact replay is identical.
 */
import stringify from 'fast-json-stable-stringify';
import { conversationOf } from '../../providers/describe.js';
import { STREAM_METHOD } from '../../providers/mcp.js';
import type { Exchange } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import { costOf as defaultCostOf } from '../cost.js';
import { shorten } from '../format.js';
import { configChanges, type ConfigChange } from '../run-config.js';
import { round4, wordSimilarity, type OutputSimilarity, type SimilarityMethod } from './similarity.js';
import { ars, type Ars } from './ars.js';
import { stepDeltas, type StepDelta } from './step-deltas.js';
import { upstreamFailureOf } from '../run-trouble.js';
import { orderExchanges, Step } from '../steps.js';
import type { CostFn } from '../cost.js';
import { argsHash, editScript, normalizeArgs, toolSequence, type ToolCallEntry, type ToolEdit } from './tool-sequence.js';
import { alignSteps, llmPairs, type StepPair } from './align.js';

export interface RunDiff {
  /** No tool edits, no diverging step, equal final outputs, the same number of LLM calls, no configuration change. */
  identical: boolean;
  /** LLM calls in the replay minus LLM calls in the original. */
  iterationsDelta: number;
  toolSequenceDiff: ToolEdit[];
  /** Where the runs first part, and why; null when every compared step matches (see `Divergence`). */
  firstDivergence: Divergence | null;
  outputDiff: { equal: boolean; original: string | null; replay: string | null; similarity: number; method: SimilarityMethod };
  /** Total tokens, replay minus original. */
  tokensDelta: number;
  /** The same by direction. */
  tokensDeltaDetail: { input: number; output: number };
  /** USD, replay minus original; null when a call on either side has no known price. */
  costDelta: number | null;
  /** Run wall time (last exchange end minus first start), replay minus original. */
  durationDeltaMs: number;
  score: number;
  /** Kurral's Agent Regression Score (see ars.ts). */
  ars: Ars;
  configChanges: ConfigChange[];
  /** LLM call by LLM call: output similarity and deltas (see step-deltas.ts). */
  steps: StepDelta[];
  /** When B is a replay of A: how many of A's exchanges no answer of B came from; otherwise null. */
  unusedRecordings: number | null;
  /** LLM calls both runs made, over the most either made (1 when neither calls a model): part of the score. */
  callAgreement: number;
  /**
   * LLM calls only the original made (a run that skipped them), and only the replay made, by their step on each tape
   * (tool calls: `toolSequenceDiff`).
   */
  removedCalls: CallRef[];
  addedCalls: CallRef[];
}

/** A call by its step on its tape: `LLM gpt-4.1` and what it asked, in short. */
export interface CallRef {
  step: number;
  call: string;
  asked: string;
}

/**
 * Where two runs part, in the step numbers `tapedeck show` gives each tape (`show A --step N`): `step` in the
 * original, `replayStep` in the replay. One of them is null when that run had ended before it (the other went on).
 */
export interface Divergence {
  step: number | null;
  replayStep: number | null;
  reason: string;
  /** A call only one run made, while the other went on: `removed` (only the original made it) or `added`. */
  only?: 'removed' | 'added';
}

export interface DiffOptions {
  /** Cost of one exchange (default: the built-in price table). */
  costOf?: CostFn;
  /** How alike two outputs are (default: the word method; `embeddingSimilarity` gives one from an endpoint). */
  similarity?: OutputSimilarity;
}

/** A run as the diff sees it: its exchanges in timeline order, the steps it compares, its tool calls, its final output. */
export interface Run {
  tape: LoadedTape;
  exchanges: Exchange[];
  /**
   * The compared steps: LLM calls and MCP requests (notifications, server streams and plain HTTP left out). Each
   * keeps its step number on the whole timeline (`index`, as `tapedeck show` numbers it).
   */
  steps: Step[];
  tools: ToolCallEntry[];
  finalOutput: string | null;
}

/** Whether the diff compares an exchange: an LLM call, or an MCP request from the client. */
function compared(ex: Exchange): boolean {
  if (ex.llm) return true;
  return (
    ex.mcp !== undefined && ex.mcp.direction === 'client-to-server' && ex.mcp.method !== STREAM_METHOD && ex.mcp.jsonrpcId !== undefined
  );
}

/** `LLM gpt-4o`, `MCP tools/call get_weather`, `MCP initialize`. */
export function stepLabel(step: Step): string {
  const ex = step.exchange;
  if (ex.llm) return `LLM ${ex.llm.model ?? ex.llm.api}`;
  return `MCP ${ex.mcp?.method ?? '?'}${ex.mcp?.toolName ? ` ${ex.mcp.toolName}` : ''}`;
}

/** A run from its tape, read through the meaning recorded on each exchange. */
export function runOf(tape: LoadedTape): Run {
  const exchanges = orderExchanges(tape.exchanges);
  const steps = exchanges.map((ex, i) => new Step(i, ex)).filter((s) => compared(s.exchange));
  let finalOutput: string | null = null;
  for (const ex of exchanges)
    if (ex.llm?.outputText !== undefined && ex.llm.outputText !== '' && ex.llm.errorType === undefined) finalOutput = ex.llm.outputText;
  return { tape, exchanges, steps, tools: toolSequence(exchanges), finalOutput };
}

export function diffTapes(a: LoadedTape, b: LoadedTape, opts: DiffOptions = {}): RunDiff {
  return diffRuns(runOf(a), runOf(b), opts);
}

export function diffRuns(a: Run, b: Run, opts: DiffOptions = {}): RunDiff {
  const costOf = opts.costOf ?? ((ex: Exchange) => defaultCostOf(ex));
  const { edits, common } = editScript(a.tools, b.tools);
  const longer = Math.max(a.tools.length, b.tools.length);
  const agreement = longer === 0 ? 1 : common / longer;
  const sim = opts.similarity ?? wordSimilarity;
  const similarity = sim.of(a.finalOutput ?? '', b.finalOutput ?? '');
  const outputDiff = {
    equal: a.finalOutput === b.finalOutput,
    original: a.finalOutput,
    replay: b.finalOutput,
    similarity,
    method: sim.method,
  };
  const iterationsDelta = b.steps.filter((s) => s.kind === 'LLM').length - a.steps.filter((s) => s.kind === 'LLM').length;
  const pairs = alignSteps(a.steps, b.steps);
  const firstDivergence = divergenceOf(pairs);
  const llm = llmPairs(pairs);
  const callAgreement = llm.length === 0 ? 1 : llm.filter((p) => p.a !== undefined && p.b !== undefined).length / llm.length;
  const changes = configChanges({ exchanges: a.exchanges, header: a.tape.header }, { exchanges: b.exchanges, header: b.tape.header });
  const ta = tokens(a.exchanges);
  const tb = tokens(b.exchanges);
  const ca = cost(a.exchanges, costOf);
  const cb = cost(b.exchanges, costOf);
  return {
    identical: edits.length === 0 && firstDivergence === null && outputDiff.equal && iterationsDelta === 0 && changes.length === 0,
    callAgreement: round4(callAgreement),
    removedCalls: llm.flatMap((p) => (p.a !== undefined && p.b === undefined ? [callRef(p.a)] : [])),
    addedCalls: llm.flatMap((p) => (p.b !== undefined && p.a === undefined ? [callRef(p.b)] : [])),
    iterationsDelta,
    toolSequenceDiff: edits,
    firstDivergence,
    outputDiff,
    tokensDelta: tb.total - ta.total,
    tokensDeltaDetail: { input: tb.input - ta.input, output: tb.output - ta.output },
    costDelta: ca === null || cb === null ? null : Math.round((cb - ca) * 1e9) / 1e9,
    durationDeltaMs: Math.round(wallTime(b.exchanges) - wallTime(a.exchanges)),
    score: round4(0.5 * similarity + 0.5 * agreement * callAgreement),
    ars: ars(similarity, a.tools, b.tools),
    configChanges: changes,
    steps: stepDeltas(a, b, { costOf, similarity: sim, pairs }),
    unusedRecordings: unusedRecordings(a, b),
  };
}

/**
 * Where two lists of compared steps first part, with why; null when they match step for step. The steps are paired
 * by what they asked (`alignSteps`); the result names each one by its own step number.
 */
export function divergence(a: readonly Step[], b: readonly Step[]): Divergence | null {
  return divergenceOf(alignSteps(a, b));
}

function divergenceOf(pairs: readonly StepPair[]): Divergence | null {
  for (let k = 0; k < pairs.length; k++) {
    const { a, b } = pairs[k] as StepPair;
    if (a !== undefined && b !== undefined) {
      const reason = stepDifference(a, b);
      if (reason !== undefined) return { step: a.index, replayStep: b.index, reason };
      continue;
    }
    const rest = pairs.slice(k);
    // One run went on after the other had ended.
    if (a !== undefined && rest.every((p) => p.b === undefined))
      return {
        step: a.index,
        replayStep: null,
        reason: `the replay ended here; the original went on with ${rest.length} more step(s), starting with ${stepLabel(a)}`,
      };
    if (b !== undefined && rest.every((p) => p.a === undefined))
      return {
        step: null,
        replayStep: b.index,
        reason: `the original ended here; the replay went on with ${rest.length} more step(s), starting with ${stepLabel(b)}`,
      };
    if (a !== undefined)
      return { step: a.index, replayStep: null, reason: `removed: the replay never made ${described(a)}`, only: 'removed' };
    if (b !== undefined)
      return { step: null, replayStep: b.index, reason: `added: the original never made ${described(b)}`, only: 'added' };
  }
  return null;
}

/** `LLM gpt-4.1 "hello two"`: a step and what it asked, in short. */
function described(step: Step): string {
  const asked = callRef(step).asked;
  return `${stepLabel(step)}${asked === '' ? '' : ` ${asked}`}`;
}

function callRef(step: Step): CallRef {
  const args = step.args;
  const asked =
    args === undefined || args === null
      ? ''
      : typeof args === 'string'
        ? JSON.stringify(shorten(args, 60))
        : shorten(normalizeArgs(args), 60);
  return { step: step.index, call: stepLabel(step), asked };
}

/**
 * Where the runs part, for people, in `tapedeck show`'s step numbers: `step 4` when it is the same step number in
 * both, `step 4 in A, step 5 in B` when not, `step 6 in B (A had ended)` when one run had ended.
 */
export function divergenceAt(d: Divergence, a: string, b: string): string {
  if (d.step !== null && d.replayStep !== null)
    return d.step === d.replayStep ? `step ${d.step}` : `step ${d.step} in ${a}, step ${d.replayStep} in ${b}`;
  if (d.step !== null) return `step ${d.step} in ${a} (${b} ${d.only === 'removed' ? 'never made it' : 'had ended'})`;
  return `step ${d.replayStep ?? '?'} in ${b} (${a} ${d.only === 'added' ? 'never made it' : 'had ended'})`;
}

const SHORT = 80;

function stepDifference(a: Step, b: Step): string | undefined {
  const ea = a.exchange;
  const eb = b.exchange;
  if (a.kind !== b.kind || ea.mcp?.method !== eb.mcp?.method) return `different step: original ${stepLabel(a)}, replay ${stepLabel(b)}`;
  // An upstream that failed one side (a 429, a 500, a broken connection) is the cause: say so before its effects
  // (no tool calls, no output) are reported as the model's doing.
  const fa = upstreamFailureOf(ea);
  const fb = upstreamFailureOf(eb);
  if (fa !== fb) {
    if (fa === undefined) return `the replay's ${stepLabel(b)} failed upstream: ${fb}`;
    if (fb === undefined) return `the original's ${stepLabel(a)} failed upstream: ${fa}`;
    return `${stepLabel(a)} failed upstream differently: original ${fa}, replay ${fb}`;
  }
  if (ea.mcp && eb.mcp) {
    if (ea.mcp.toolName !== eb.mcp.toolName)
      return `different tool: original calls ${ea.mcp.toolName ?? '?'}, replay calls ${eb.mcp.toolName ?? '?'}`;
    if (argsHash(ea.mcp.arguments) !== argsHash(eb.mcp.arguments)) {
      return `different arguments for ${ea.mcp.toolName ?? ea.mcp.method}: original ${shorten(normalizeArgs(ea.mcp.arguments), SHORT)}, replay ${shorten(normalizeArgs(eb.mcp.arguments), SHORT)}`;
    }
  }
  if (ea.llm && eb.llm) {
    // Tools the agent ran itself reach the model only as tool results in the next request.
    const ra = toolResultsSent(ea);
    const rb = toolResultsSent(eb);
    const changedResult = ra.findIndex((r, k) => r !== rb[k]);
    if (changedResult !== -1 || ra.length !== rb.length) {
      const k = changedResult === -1 ? Math.min(ra.length, rb.length) : changedResult;
      return `different result sent to the model (tool result ${k + 1}): original ${JSON.stringify(shorten(ra[k] ?? '(none)', SHORT))}, replay ${JSON.stringify(shorten(rb[k] ?? '(none)', SHORT))}`;
    }
    const names = (ex: Exchange): string[] => (ex.llm?.toolCalls ?? []).map((c) => c.name);
    if (stringify(names(ea)) !== stringify(names(eb)))
      return `different tool: the model asked for [${names(ea).join(', ')}] in the original, [${names(eb).join(', ')}] in the replay`;
    const calls = eb.llm.toolCalls;
    const changed = ea.llm.toolCalls.findIndex((c, k) => argsHash(c.arguments) !== argsHash(calls[k]?.arguments));
    if (changed !== -1) {
      const ca = ea.llm.toolCalls[changed];
      return `different arguments for ${ca?.name ?? '?'}: original ${shorten(normalizeArgs(ca?.arguments), SHORT)}, replay ${shorten(normalizeArgs(calls[changed]?.arguments), SHORT)}`;
    }
  }
  if (outcomeKey(ea) !== outcomeKey(eb))
    return `different result of ${stepLabel(a)}: original ${describeOutcome(a)}, replay ${describeOutcome(b)}`;
  if ((ea.llm?.outputText ?? '') !== (eb.llm?.outputText ?? '')) {
    return `different output: original ${JSON.stringify(shorten(ea.llm?.outputText ?? '', SHORT))}, replay ${JSON.stringify(shorten(eb.llm?.outputText ?? '', SHORT))}`;
  }
  return undefined;
}

/** The texts of the tool results in an LLM request, in order (tool call ids are per-run noise and left out). */
function toolResultsSent(ex: Exchange): string[] {
  return conversationOf(ex)
    .filter((m) => m.role === 'tool')
    .map((m) => m.text);
}

/** What came back, without per-run noise (JSON-RPC ids, timing, how a replay found it). */
function outcomeKey(ex: Exchange): string {
  const gone = ex.match?.kind === 'miss' || ex.match?.kind === 'blocked' ? ex.match.kind : undefined;
  return stringify({
    status: ex.response?.status ?? null,
    error: ex.error?.code ?? null,
    gone: gone ?? null,
    errorType: ex.llm?.errorType ?? null,
    result: ex.mcp?.result ?? null,
    rpcError: ex.mcp?.error ?? null,
    isError: ex.mcp?.isError ?? null,
  });
}

function describeOutcome(step: Step): string {
  const ex = step.exchange;
  const error = step.error;
  if (error !== undefined) return shorten(error, SHORT);
  if (ex.mcp) return shorten(ex.mcp.result, SHORT);
  return `HTTP ${ex.response?.status ?? '?'}`;
}

/**
 * When B replays A: A's recorded requests (LLM calls, MCP requests, plain HTTP; not MCP notifications or server
 * streams, which a replay answers itself) that no answer of B came from (`match.source`); null when B is not A's replay.
 */
function unusedRecordings(a: Run, b: Run): number | null {
  if (b.tape.header.replayOf?.tape !== a.tape.name) return null;
  const used = new Set(b.exchanges.map((ex) => ex.match?.source).filter((id) => id !== undefined));
  return a.exchanges.filter((ex) => (ex.mcp === undefined || compared(ex)) && !used.has(ex.id)).length;
}

export function tokens(exchanges: readonly Exchange[]): { input: number; output: number; total: number } {
  const t = { input: 0, output: 0, total: 0 };
  for (const ex of exchanges) {
    const u = ex.llm?.usage;
    if (!u) continue;
    t.input += u.inputTokens ?? 0;
    t.output += u.outputTokens ?? 0;
    t.total += u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
  }
  return t;
}

/** USD of a run's LLM calls that report usage; null when one of them has no known price. */
export function cost(exchanges: readonly Exchange[], costOf: CostFn): number | null {
  let usd = 0;
  for (const ex of exchanges) {
    if (ex.llm?.usage === undefined) continue;
    const c = costOf(ex);
    if (c === null) return null;
    usd += c;
  }
  return usd;
}

function wallTime(exchanges: readonly Exchange[]): number {
  if (exchanges.length === 0) return 0;
  let start = Infinity;
  let end = 0;
  for (const ex of exchanges) {
    start = Math.min(start, ex.offsetMs);
    end = Math.max(end, ex.offsetMs + ex.timing.durationMs);
  }
  return end - start;
}
