/**
 * Per-tape totals for `tapedeck list` and the viewer's list: exchanges, LLM and tool calls, tokens, cost, duration,
 * and for replay tapes which tape they replayed and how each answer was found. Built from the running totals every
 * store keeps (`tape/stats.ts`), priced with the price table of the day.
 */
import type { MatchKind, TapeHeader } from '../tape/schema.js';
import { addLlmCall, statsOf, type TapeStats } from '../tape/stats.js';
import type { Exchange } from '../tape/schema.js';
import { sessionSteps } from '../providers/sessions/expand.js';
import type { LoadedTape, TapeListEntry, TapeProblem, TapeQuery, TapeStore } from '../tape/store.js';
import { createUsageCostFn, type UsageCostFn } from './cost.js';

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
  /** Models and tools seen. */
  models: string[];
  tools: string[];
  replayOf?: { tape: string; onMiss: string };
  matches?: Record<MatchKind, number>;
  problems: TapeProblem[];
}

export interface SummarizeOptions {
  /** Prices per-model token totals (default: the built-in price table). */
  usageCost?: UsageCostFn;
}

/** A summary from a tape's header and running totals. */
export function summaryFromStats(
  name: string,
  header: TapeHeader,
  stats: TapeStats,
  problems: TapeProblem[],
  opts: SummarizeOptions = {},
): TapeSummary {
  const price = opts.usageCost ?? createUsageCostFn();
  let cost: number | null = null;
  let costedCalls = 0;
  for (const [model, u] of Object.entries(stats.usage)) {
    const c = price(
      { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cachedInputTokens: u.cachedInputTokens },
      model === '' ? undefined : model,
    );
    if (c === null) continue;
    cost = Math.round(((cost ?? 0) + c) * 1e9) / 1e9;
    costedCalls += u.calls;
  }
  const summary: TapeSummary = {
    name,
    createdAt: header.createdAt,
    mode: header.mode,
    exchanges: stats.exchanges,
    llmCalls: stats.llmCalls,
    // A tool the model asked for runs either through an MCP exchange on this tape or in the agent itself:
    // count whichever side saw more, so a call is never counted twice.
    toolCalls: Math.max(stats.mcpToolCalls, stats.modelToolCalls),
    tokens: { ...stats.tokens },
    cost,
    costedCalls,
    durationMs: stats.startMs === null || stats.endMs === null ? 0 : stats.endMs - stats.startMs,
    errors: stats.errors,
    models: stats.models,
    tools: stats.tools,
    problems,
  };
  if (header.mode === 'replay' || header.replayOf) {
    if (header.replayOf) summary.replayOf = { tape: header.replayOf.tape, onMiss: header.replayOf.onMiss };
    summary.matches = { ...stats.matches };
  }
  return summary;
}

export function summarizeTape(tape: LoadedTape, opts: SummarizeOptions = {}): TapeSummary {
  return summaryFromStats(tape.name, tape.header, statsWithSessions(tape.exchanges), tape.problems, opts);
}

/**
 * A tape's totals with each WebSocket session's responses counted as the LLM calls they are (their usage, models,
 * tool calls), as `show` and `cost` count them: the tape layer's totals cannot read a session's messages.
 */
export function statsWithSessions(exchanges: readonly Exchange[]): TapeStats {
  const stats = statsOf(exchanges);
  for (const ex of exchanges) {
    if (ex.websocket === undefined) continue;
    for (const step of sessionSteps(ex).slice(1)) if (step.llm !== undefined) addLlmCall(stats, step.llm);
  }
  return stats;
}

/** One row of `list`: a summary, or why the tape could not be read at all (missing/corrupt header). */
export type TapeListing = { ok: true; summary: TapeSummary; modifiedAt: string } | { ok: false; name: string; error: string };

export function listingOf(entry: TapeListEntry, opts: SummarizeOptions = {}): TapeListing {
  return entry.ok
    ? { ok: true, summary: summaryFromStats(entry.name, entry.header, entry.stats, entry.problems, opts), modifiedAt: entry.modifiedAt }
    : { ok: false, name: entry.name, error: entry.error };
}

export interface TapeListingPage {
  tapes: TapeListing[];
  next?: string;
}

/** Summaries of a store's tapes, by name, filtered and paged. A tape that cannot be read is reported, never fatal. */
export async function listTapes(store: TapeStore, query: TapeQuery = {}, opts: SummarizeOptions = {}): Promise<TapeListingPage> {
  const page = await store.list(query);
  // A tape with sessions is read again (they are few) to count their LLM calls; its stored totals cannot.
  const entries = await Promise.all(
    page.tapes.map(async (e) => {
      if (!e.ok || (e.stats.sessions ?? 0) === 0) return e;
      const tape = await store.load(e.name, { resolveFiles: false }).catch(() => undefined);
      return tape === undefined ? e : { ...e, stats: statsWithSessions(tape.exchanges) };
    }),
  );
  return { tapes: entries.map((e) => listingOf(e, opts)), ...(page.next !== undefined ? { next: page.next } : {}) };
}
