/**
 * Per-tape totals for `tapedeck list`: exchanges, LLM and tool calls, tokens, cost, duration, and for replay
 * tapes which tape they replayed and how each answer was found.
 */
import { listTapeNames, readTape, type LoadedTape, type TapeProblem } from '../tape/tape-reader.js';
import { tapeFile } from '../tape/paths.js';
import type { MatchKind } from '../tape/schema.js';
import type { CostFn } from './cost.js';
import { errorOf } from './steps.js';

export interface TapeSummary {
  name: string;
  createdAt: string;
  mode: 'record' | 'replay';
  exchanges: number;
  llmCalls: number;
  /** MCP `tools/call` requests plus the tool calls the model asked for that no MCP exchange carried. */
  toolCalls: number;
  tokens: { input: number; output: number; total: number };
  /** USD; null when no exchange had a known price. */
  cost: number | null;
  /** Costed exchanges out of the LLM calls (a partial total is marked as such). */
  costedCalls: number;
  /** From the first request start to the last response end, in ms. */
  durationMs: number;
  errors: number;
  replayOf?: { tape: string; onMiss: string };
  matches?: Record<MatchKind, number>;
  problems: TapeProblem[];
}

export interface SummarizeOptions {
  costOf?: CostFn;
}

export function summarizeTape(tape: LoadedTape, opts: SummarizeOptions = {}): TapeSummary {
  const costOf = opts.costOf ?? (() => null);
  const tokens = { input: 0, output: 0, total: 0 };
  let llmCalls = 0;
  let mcpToolCalls = 0;
  let modelToolCalls = 0;
  let cost: number | null = null;
  let costedCalls = 0;
  let start = Infinity;
  let end = 0;
  let errors = 0;
  const matches: Record<MatchKind, number> = { exact: 0, semantic: 0, live: 0, blocked: 0, miss: 0, mock: 0 };
  for (const ex of tape.exchanges) {
    start = Math.min(start, ex.offsetMs);
    end = Math.max(end, ex.offsetMs + ex.timing.durationMs);
    if (ex.match) matches[ex.match.kind]++;
    if (errorOf(ex) !== undefined) errors++;
    if (ex.mcp?.method === 'tools/call') mcpToolCalls++;
    if (!ex.llm) continue;
    llmCalls++;
    modelToolCalls += ex.llm.toolCalls.length;
    const u = ex.llm.usage;
    if (u) {
      tokens.input += u.inputTokens ?? 0;
      tokens.output += u.outputTokens ?? 0;
      tokens.total += u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
    }
    const c = costOf(ex);
    if (c !== null) {
      cost = (cost ?? 0) + c;
      costedCalls++;
    }
  }
  const summary: TapeSummary = {
    name: tape.name,
    createdAt: tape.header.createdAt,
    mode: tape.header.mode,
    exchanges: tape.exchanges.length,
    llmCalls,
    // A tool the model asked for runs either through an MCP exchange on this tape or in the agent itself:
    // count whichever side saw more, so a call is never counted twice.
    toolCalls: Math.max(mcpToolCalls, modelToolCalls),
    tokens,
    cost,
    costedCalls,
    durationMs: tape.exchanges.length === 0 ? 0 : end - start,
    errors,
    problems: tape.problems,
  };
  if (tape.header.mode === 'replay' || tape.header.replayOf) {
    if (tape.header.replayOf) summary.replayOf = { tape: tape.header.replayOf.tape, onMiss: tape.header.replayOf.onMiss };
    summary.matches = matches;
  }
  return summary;
}

/** One row of `list`: a summary, or why the tape could not be read at all (missing/corrupt header). */
export type TapeListing = { ok: true; summary: TapeSummary } | { ok: false; name: string; error: string };

/** Summaries of every tape under `dir`, sorted by name. A tape that cannot be read is reported, never fatal. */
export async function listTapes(dir: string, opts: SummarizeOptions = {}): Promise<TapeListing[]> {
  const out: TapeListing[] = [];
  for (const name of await listTapeNames(dir)) {
    try {
      const tape = await readTape(tapeFile(dir, name), { resolveFiles: false });
      out.push({ ok: true, summary: summarizeTape({ ...tape, name }, opts) });
    } catch (err) {
      out.push({ ok: false, name, error: (err as Error).message });
    }
  }
  return out;
}
