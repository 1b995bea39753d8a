/**
 * A tape as steps: its exchanges in timeline order (`offsetMs`), each described once for the inspector
 * (kind, what was called, arguments and result, tokens, duration, status, match kind on replay tapes).
 */
import { STREAM_METHOD } from '../providers/mcp.js';
import { bodyJson, bodyText } from '../tape/body.js';
import type { Exchange, MatchKind } from '../tape/schema.js';

export type StepKind = 'LLM' | 'MCP' | 'HTTP';

export interface Step {
  /** 0-based position on the timeline. */
  index: number;
  exchangeId: string;
  offsetMs: number;
  kind: StepKind;
  route: string;
  method: string;
  path: string;
  /** Model for LLM steps, tool name (or MCP method) for MCP steps, the path for HTTP. */
  target: string;
  /** What was asked: tool calls' arguments, the last user message, or the request body. */
  args: unknown;
  /** What came back: output text / tool calls, the tool result, or the response body. */
  result: unknown;
  tokens: { input?: number; output?: number; total?: number } | undefined;
  durationMs: number;
  status: number | undefined;
  /** Why the step failed, when it did (transport error, HTTP >= 400, provider error, MCP tool error). */
  error: string | undefined;
  match: MatchKind | undefined;
  exchange: Exchange;
}

/** The tape's exchanges in timeline order (by start offset, then by completion order). */
export function orderExchanges(exchanges: readonly Exchange[]): Exchange[] {
  return [...exchanges].sort((a, b) => a.offsetMs - b.offsetMs || a.seq - b.seq);
}

export function toSteps(exchanges: readonly Exchange[]): Step[] {
  return orderExchanges(exchanges).map((ex, i) => stepOf(ex, i));
}

export function stepOf(ex: Exchange, index: number): Step {
  const kind: StepKind = ex.llm ? 'LLM' : ex.mcp ? 'MCP' : 'HTTP';
  const usage = ex.llm?.usage;
  const tokens = usage
    ? { input: usage.inputTokens, output: usage.outputTokens, total: usage.totalTokens ?? sum(usage.inputTokens, usage.outputTokens) }
    : undefined;
  return {
    index,
    exchangeId: ex.id,
    offsetMs: ex.offsetMs,
    kind,
    route: ex.route,
    method: ex.request.method,
    path: ex.request.path,
    target: targetOf(ex),
    args: argsOf(ex),
    result: resultOf(ex),
    tokens,
    durationMs: ex.timing.durationMs,
    status: ex.response?.status,
    error: errorOf(ex),
    match: ex.match?.kind,
    exchange: ex,
  };
}

function sum(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
}

function targetOf(ex: Exchange): string {
  if (ex.llm) return ex.llm.model ?? ex.llm.api;
  if (ex.mcp) return ex.mcp.toolName ?? ex.mcp.method;
  return ex.request.path;
}

function argsOf(ex: Exchange): unknown {
  if (ex.mcp) return ex.mcp.arguments;
  if (ex.llm) return lastUserText(bodyJson(ex.request.body));
  return bodyText(ex.request.body);
}

function resultOf(ex: Exchange): unknown {
  if (ex.llm) {
    const calls = ex.llm.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.arguments) ?? ''})`);
    const text = ex.llm.outputText;
    if (calls.length > 0) return text ? `${text} -> ${calls.join(', ')}` : calls.join(', ');
    return text ?? ex.llm.errorType;
  }
  if (ex.mcp) return ex.mcp.error ?? ex.mcp.result;
  if (ex.response?.events) return `${ex.response.events.length} events`;
  return bodyText(ex.response?.body);
}

/** Why an exchange failed (or was blocked / missed on replay), or undefined when it did not. */
export function errorOf(ex: Exchange): string | undefined {
  if (ex.match?.kind === 'blocked') return `blocked${ex.match.reason ? `: ${ex.match.reason}` : ''}`;
  if (ex.match?.kind === 'miss') return `miss${ex.match.reason ? `: ${ex.match.reason}` : ''}`;
  // The client closing a standing MCP server stream is how such a stream ends, not a failure.
  if (ex.error && !(ex.mcp?.method === STREAM_METHOD && ex.error.code === 'CLIENT_CLOSED')) return `${ex.error.code}: ${ex.error.message}`;
  if (ex.llm?.errorType) return ex.llm.errorType;
  if (ex.mcp?.error !== undefined) return `json-rpc error ${JSON.stringify(ex.mcp.error)}`;
  if (ex.mcp?.isError === true) return 'tool error';
  if (ex.response && ex.response.status >= 400) return `HTTP ${ex.response.status}`;
  return undefined;
}

/** The text of the last user message in a request body (chat, messages, Gemini contents, Responses input). */
function lastUserText(body: unknown): string | undefined {
  if (!isObj(body)) return undefined;
  const list = Array.isArray(body.messages)
    ? body.messages
    : Array.isArray(body.contents)
      ? body.contents
      : typeof body.input === 'string'
        ? [{ role: 'user', content: body.input }]
        : Array.isArray(body.input)
          ? body.input
          : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const m: unknown = list[i];
    if (isObj(m) && m.role === 'user') {
      const text = contentText(m.content ?? m.parts);
      if (text !== '') return text;
    }
  }
  return undefined;
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Plain text of a message content in any provider shape (string, text blocks, Gemini parts, Responses items). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') out.push(part);
    else if (
      isObj(part) &&
      typeof part.text === 'string' &&
      (part.type === undefined || part.type === 'text' || part.type === 'input_text' || part.type === 'output_text')
    )
      out.push(part.text);
  }
  return out.join('\n');
}
