/**
 * What an exchange means, written beside it on the tape: for an LLM call, the request side (provider, API, model,
 * parameters, streamed) and the answer (usage, tool calls, text, thinking, stop reason, error), read by the API's
 * adapter; for MCP, the JSON-RPC meaning. Inspect, diff and matching read this recorded meaning afterwards.
 */
import type { Logger } from '../log.js';
import { bodyJson } from '../tape/body.js';
import type { Exchange, LlmMeaning, RequestRecord, SseEvent } from '../tape/schema.js';
import type { NewExchange } from '../tape/stores/tape-writer.js';
import { newAnswer, answerError } from './answer.js';
import { foldEvent, requestSideOf, withAnswer } from './llm-meaning.js';
import { detectAdapter } from './detect.js';
import { isObj } from './json.js';
import { describeMcp } from './mcp.js';
import { adapterFor } from './registry.js';
import type { ConversationMessage, ExchangeView } from './types.js';

/** Request-side meaning (provider, api, model, params, streamed) of an LLM request, for matching and miss reports. */
export function requestSideLlm(route: string, request: RequestRecord, upstream?: string): LlmMeaning | undefined {
  const found = detectAdapter(route, request.path, request.method, upstream);
  if (found === undefined) return undefined;
  const body = bodyJson(request.body);
  return requestSideOf(found.provider, found.adapter, isObj(body) ? body : {}, request.path);
}

/**
 * What is already known of a request's meaning (`http/request-meaning.ts` computes it once per request): its LLM
 * request side, or undefined when it is not an LLM call. Describing with it detects nothing again.
 */
export interface KnownRequestSide {
  llm: LlmMeaning | undefined;
}

/** Full meaning of a completed exchange: request side plus usage, tool calls, output text, stop reason. Never throws on odd input. */
export function describeLlm(ex: ExchangeView & { upstream?: string | undefined }, known?: KnownRequestSide): LlmMeaning | undefined {
  const meaning = known !== undefined ? known.llm : requestSideLlm(ex.route, ex.request, ex.upstream);
  const adapter = adapterFor(meaning?.api);
  if (meaning === undefined || adapter === undefined) return meaning;
  const res = ex.response;
  if (res === undefined) return meaning;
  const answer = newAnswer();
  if (res.events !== undefined) {
    for (const ev of res.events) foldEvent(adapter, answer, ev);
  } else {
    const body = bodyJson(res.body);
    if (isObj(body)) {
      if (res.status >= 400) answerError(answer, body);
      else adapter.describeBody(answer, body);
    }
  }
  return withAnswer(meaning, answer);
}

/** An answer read event by event, as a stream is captured: for a stream too large to keep whole (stored apart as it comes). */
export interface StreamDescriber {
  push(events: readonly SseEvent[]): void;
  /** The meaning of the events pushed so far (request side plus answer), as `describeLlm` would give for them. */
  meaning(): LlmMeaning;
}

/** A describer for an LLM call's streamed answer; undefined when the request is not an LLM call. */
export function describeStream(
  ex: ExchangeView & { upstream?: string | undefined },
  known?: KnownRequestSide,
): StreamDescriber | undefined {
  const meaning = known !== undefined ? known.llm : requestSideLlm(ex.route, ex.request, ex.upstream);
  const adapter = adapterFor(meaning?.api);
  if (meaning === undefined || adapter === undefined) return undefined;
  const answer = newAnswer();
  let flat = 0;
  return {
    push(events) {
      for (const ev of events) foldEvent(adapter, answer, ev);
      // The text grows a delta at a time, a rope of millions of small strings (~50 bytes each, several times the text):
      // made one string again every MiB or so.
      if (answer.text.length + answer.thinking.length - flat > FLATTEN_CHARS) {
        answer.text.indexOf('\u0000');
        answer.thinking.indexOf('\u0000');
        flat = answer.text.length + answer.thinking.length;
      }
    },
    meaning: () => withAnswer(meaning, answer),
  };
}

/** How much a described stream's text may grow before it is made one string again (see `describeStream`). */
const FLATTEN_CHARS = 1024 * 1024;

/**
 * Add what an exchange means (LLM call, MCP message) before it is written. A describer that fails never costs the
 * exchange: it is written without that meaning and the failure is logged.
 */
export function describeExchange(ex: NewExchange, log?: Logger, known?: KnownRequestSide): NewExchange {
  // Object.assign, not a spread: this runs for every exchange, in many shapes, and V8 spreads those on its slow path.
  const out: NewExchange = Object.assign({}, ex);
  try {
    // A stream stored apart as it came was described as it came: its events are not here to read again.
    const llm = ex.response?.eventsFile !== undefined && ex.llm !== undefined ? ex.llm : describeLlm(ex, known);
    if (llm !== undefined) out.llm = llm;
  } catch (err) {
    log?.warn({ err: (err as Error).message, route: ex.route, path: ex.request.path }, 'could not describe LLM exchange');
  }
  try {
    const mcp = describeMcp(ex);
    if (mcp !== undefined) out.mcp = mcp;
  } catch (err) {
    log?.warn({ err: (err as Error).message, route: ex.route, path: ex.request.path }, 'could not describe MCP exchange');
  }
  return out;
}

/** The conversation an LLM call's model saw (its request), read by the adapter of the API the tape recorded. */
export function conversationOf(ex: Pick<Exchange, 'llm' | 'request'>): ConversationMessage[] {
  return adapterFor(ex.llm?.api)?.conversation(bodyJson(ex.request.body)) ?? [];
}
