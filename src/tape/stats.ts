/**
 * A tape's running totals, kept by every writer as it appends and stored beside the tape where the store can
 * (PostgreSQL keeps them in the tape's row): what `tapedeck list` prints and filters on, without reading the
 * exchanges again. Plain data, JSON as it is. Cost is not here: it depends on the price table of the day, so the
 * totals keep token counts per model and `inspect/summary.ts` prices them when asked.
 */
import { STREAM_METHOD, type Exchange, type MatchKind } from './schema.js';

export interface ModelUsage {
  /** LLM calls on this model that reported usage. */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

export interface TapeStats {
  exchanges: number;
  /**
   * WebSocket sessions (Realtime, Live): their LLM calls are read from their messages by the providers, a layer above
   * (`inspect/summary.ts` counts them); absent in totals an earlier tapedeck stored.
   */
  sessions?: number;
  llmCalls: number;
  /** MCP `tools/call` requests. */
  mcpToolCalls: number;
  /** Tool calls the model asked for. */
  modelToolCalls: number;
  errors: number;
  tokens: { input: number; output: number; total: number };
  /** Token counts per model (`""` for calls without a model), for pricing. */
  usage: Record<string, ModelUsage>;
  /** Earliest request start and latest response end, ms on the tape's timeline (null: no exchange yet). */
  startMs: number | null;
  endMs: number | null;
  matches: Record<MatchKind, number>;
  /** Models, providers and tools seen (sorted, distinct): what listings filter on. */
  models: string[];
  providers: string[];
  tools: string[];
}

export function emptyStats(): TapeStats {
  return {
    exchanges: 0,
    sessions: 0,
    llmCalls: 0,
    mcpToolCalls: 0,
    modelToolCalls: 0,
    errors: 0,
    tokens: { input: 0, output: 0, total: 0 },
    usage: {},
    startMs: null,
    endMs: null,
    matches: { exact: 0, semantic: 0, live: 0, blocked: 0, miss: 0, mock: 0, fault: 0 },
    models: [],
    providers: [],
    tools: [],
  };
}

/** Add one exchange to `stats` (in place; returns it). */
export function addToStats(stats: TapeStats, ex: Exchange): TapeStats {
  stats.exchanges++;
  stats.startMs = stats.startMs === null ? ex.offsetMs : Math.min(stats.startMs, ex.offsetMs);
  const end = ex.offsetMs + ex.timing.durationMs;
  stats.endMs = stats.endMs === null ? end : Math.max(stats.endMs, end);
  // Totals stored by an earlier tapedeck may lack a kind it did not know.
  if (ex.match) stats.matches[ex.match.kind] = (stats.matches[ex.match.kind] ?? 0) + 1;
  if (exchangeError(ex) !== undefined) stats.errors++;
  if (ex.websocket !== undefined) stats.sessions = (stats.sessions ?? 0) + 1;
  if (ex.mcp?.method === 'tools/call') {
    stats.mcpToolCalls++;
    if (ex.mcp.toolName !== undefined) addName(stats.tools, ex.mcp.toolName);
  }
  return ex.llm === undefined ? stats : addLlmCall(stats, ex.llm);
}

/** Count one LLM call (`ex.llm`, or one response of a session) in `stats`. */
export function addLlmCall(stats: TapeStats, llm: NonNullable<Exchange['llm']>): TapeStats {
  stats.llmCalls++;
  stats.modelToolCalls += llm.toolCalls.length;
  for (const call of llm.toolCalls) addName(stats.tools, call.name);
  addName(stats.providers, llm.provider);
  if (llm.model !== undefined) addName(stats.models, llm.model);
  const u = llm.usage;
  if (u !== undefined) {
    stats.tokens.input += u.inputTokens ?? 0;
    stats.tokens.output += u.outputTokens ?? 0;
    stats.tokens.total += u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
    const key = llm.model ?? '';
    const m = (stats.usage[key] ??= { calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 });
    m.calls++;
    m.inputTokens += u.inputTokens ?? 0;
    m.outputTokens += u.outputTokens ?? 0;
    m.cachedInputTokens += u.cachedInputTokens ?? 0;
  }
  return stats;
}

export function statsOf(exchanges: Iterable<Exchange>): TapeStats {
  const stats = emptyStats();
  for (const ex of exchanges) addToStats(stats, ex);
  return stats;
}

/** Insert into a sorted list of distinct names. */
function addName(list: string[], name: string): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as string) < name) lo = mid + 1;
    else hi = mid;
  }
  if (list[lo] !== name) list.splice(lo, 0, name);
}

/**
 * Why an exchange failed, in a few words, or undefined when it did not: blocked, missed, an error on the way, an
 * error answer (LLM error type, JSON-RPC error, a tool's `isError`, an HTTP status >= 400).
 */
export function exchangeError(ex: Exchange): string | undefined {
  if (ex.match?.kind === 'blocked') return `blocked${ex.match.reason ? `: ${ex.match.reason}` : ''}`;
  if (ex.match?.kind === 'miss') return `miss${ex.match.reason ? `: ${ex.match.reason}` : ''}`;
  // A standing MCP server stream ends when the client closes it, and replay declines one (405): neither is a failure.
  if (ex.mcp?.method === STREAM_METHOD && (ex.error?.code === 'CLIENT_CLOSED' || ex.response?.status === 405)) return undefined;
  if (ex.error) return `${ex.error.code}: ${ex.error.message}`;
  if (ex.llm?.errorType) return ex.llm.errorType;
  if (ex.mcp?.error !== undefined) return `json-rpc error ${JSON.stringify(ex.mcp.error)}`;
  if (ex.mcp?.isError === true) return 'tool error';
  if (ex.response && ex.response.status >= 400) return `HTTP ${ex.response.status}`;
  return undefined;
}
