/**
 * A tape as steps: its exchanges in timeline order (`offsetMs`). A `Step` is a view over one `Exchange`, never a
 * copy: what the inspector shows (kind, what was called, arguments and result, tokens, status, match) is read from
 * the exchange and the meaning recorded on it (`llm`, `mcp`, `match`) when asked for.
 */
import { conversationOf, describeLlm } from '../providers/describe.js';
import { sessionSteps } from '../providers/sessions/expand.js';
import { faultOf } from '../replay/outcome.js';
import { bodyText } from '../tape/body.js';
import type { Exchange, LlmMeaning, MatchKind } from '../tape/schema.js';
import { exchangeError } from '../tape/stats.js';
import { httpErrorText } from './answer-error.js';

/** An LLM call, an MCP message, a WebSocket session (its responses are LLM steps of their own), other HTTP. */
export type StepKind = 'LLM' | 'MCP' | 'WS' | 'HTTP';

export class Step {
  constructor(
    /** 0-based position on the timeline. */
    readonly index: number,
    readonly exchange: Exchange,
  ) {}

  get exchangeId(): string {
    return this.exchange.id;
  }

  get offsetMs(): number {
    return this.exchange.offsetMs;
  }

  get kind(): StepKind {
    return stepKind(this.exchange);
  }

  get route(): string {
    return this.exchange.route;
  }

  get method(): string {
    return this.exchange.request.method;
  }

  get path(): string {
    return this.exchange.request.path;
  }

  /** Model for LLM steps, tool name (or MCP method) for MCP steps, the path for HTTP. */
  get target(): string {
    const ex = this.exchange;
    if (ex.llm) return ex.llm.model ?? ex.llm.api;
    if (ex.mcp) return ex.mcp.toolName ?? ex.mcp.method;
    return ex.request.path;
  }

  /** What was asked: tool call arguments, the last user message, or the request body. */
  get args(): unknown {
    const ex = this.exchange;
    if (ex.mcp) return ex.mcp.arguments;
    if (ex.llm) return conversationOf(ex).findLast((m) => m.role === 'user' && m.text !== '')?.text;
    return bodyText(ex.request.body);
  }

  /**
   * The LLM answer as the client got it: the meaning recorded on the exchange, or, for an answer cut mid-stream (a
   * fault rule's cut, a client that left), read again from the events that went out: a replay copies the recording's
   * meaning, the whole answer, onto its record.
   */
  get answer(): LlmMeaning | undefined {
    if (this.#answer === undefined) this.#answer = { llm: answerAsSent(this.exchange) };
    return this.#answer.llm;
  }

  #answer: { llm: LlmMeaning | undefined } | undefined;

  /** What came back: output text and tool calls (or the error the API answered), the tool result, or the response body. */
  get result(): unknown {
    const ex = this.exchange;
    const llm = this.answer;
    if (llm) {
      const calls = llm.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.arguments) ?? ''})`);
      const text = llm.outputText;
      const cut =
        ex.error?.phase === 'stream' && ex.response?.events !== undefined ? ` (cut after ${ex.response.events.length} event(s))` : '';
      if (calls.length > 0) return `${text ? `${text} -> ${calls.join(', ')}` : calls.join(', ')}${cut}`;
      if (text !== undefined) return `${text}${cut}`;
      return httpErrorText(ex) ?? (cut !== '' ? `nothing${cut}` : llm.errorType);
    }
    if (ex.mcp) return ex.mcp.error ?? ex.mcp.result;
    if (ex.response?.events) return `${ex.response.events.length} events`;
    if (ex.response?.eventsFile) return `${ex.response.eventsFile.events} events`;
    if (ex.websocket) return `${ex.websocket.frames.filter((f) => f.kind !== 'close').length} messages`;
    return bodyText(ex.response?.body);
  }

  get tokens(): { input?: number | undefined; output?: number | undefined; total?: number | undefined } | undefined {
    return tokensOf(this.exchange);
  }

  get durationMs(): number {
    return this.exchange.timing.durationMs;
  }

  get status(): number | undefined {
    return this.exchange.response?.status;
  }

  /**
   * Why the step failed, when it did (transport error, HTTP >= 400 with what the API said, provider error, MCP tool
   * error, replay miss); a fault rule's doing is named as such, with its rule.
   */
  get error(): string | undefined {
    const ex = this.exchange;
    const base = errorOf(ex);
    if (base === undefined) return undefined;
    const said = ex.error === undefined && ex.match?.kind !== 'miss' && ex.match?.kind !== 'blocked' ? httpErrorText(ex) : undefined;
    const why = said ?? base;
    const fault = faultOf(ex);
    if (fault === undefined) return why;
    return `injected by fault rule ${fault}: ${why.replace(/ by fault rule .*$/, '')}`;
  }

  get match(): MatchKind | undefined {
    return this.exchange.match?.kind;
  }
}

export function stepKind(ex: Exchange): StepKind {
  return ex.llm ? 'LLM' : ex.mcp ? 'MCP' : ex.transport === 'websocket' ? 'WS' : 'HTTP';
}

/** An LLM call's reported usage as input / output / total tokens; undefined when it reported none. */
export function tokensOf(
  ex: Exchange,
): { input?: number | undefined; output?: number | undefined; total?: number | undefined } | undefined {
  const usage = ex.llm?.usage;
  if (usage === undefined) return undefined;
  const total =
    usage.totalTokens ??
    (usage.inputTokens === undefined && usage.outputTokens === undefined
      ? undefined
      : (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0));
  return { input: usage.inputTokens, output: usage.outputTokens, total };
}

/**
 * The tape's exchanges in timeline order (by start offset, then by completion order). A WebSocket session is followed
 * by one exchange per response its API's adapter reads in it (`<id>.1`, `<id>.2`, ...): each an LLM call like any other.
 */
export function orderExchanges(exchanges: readonly Exchange[]): Exchange[] {
  return exchanges.flatMap(sessionSteps).sort((a, b) => a.offsetMs - b.offsetMs || a.seq - b.seq);
}

export function toSteps(exchanges: readonly Exchange[]): Step[] {
  return orderExchanges(exchanges).map((ex, i) => new Step(i, ex));
}

export function stepOf(ex: Exchange, index: number): Step {
  return new Step(index, ex);
}

/** Why an exchange failed (or was blocked / missed on replay), or undefined when it did not (the tape layer's rule). */
export const errorOf = exchangeError;

/** See `Step.answer`. */
function answerAsSent(ex: Exchange): LlmMeaning | undefined {
  if (ex.llm === undefined || ex.error?.phase !== 'stream' || ex.response?.events === undefined) return ex.llm;
  return describeLlm(ex, { llm: ex.llm }) ?? ex.llm;
}
