/**
 * The one place a tape record is made: a call (`call.ts`) and its answer, with how the answer was found on a replay
 * tape (`match`) and notes. Every path, record and replay, over HTTP, MCP, stdio and WebSocket, writes through this,
 * so what a tape line carries changes here and nowhere else. What the exchange means (LLM call, MCP message) is added
 * after, by the exchange log (`exchange-log.ts`).
 */
import type { Body, Exchange, ExchangeError, LlmMeaning, MatchInfo, ResponseRecord, WsFrame } from '../tape/schema.js';
import type { NewExchange, WireText } from '../tape/store.js';
import type { Call } from './call.js';

/** What came back for a call: the response (status, headers, a body or events), how it failed, how long it took. */
export interface Answer {
  response?: ResponseRecord | undefined;
  error?: ExchangeError | undefined;
  timing: { ttfbMs?: number | undefined; durationMs: number };
  /** Text the response (or its JSON body) already has, tied to that object: written as it is (`WireText`). */
  responseText?: WireText<ResponseRecord> | undefined;
  responseBodyText?: WireText<Body> | undefined;
  /** What a stream stored apart meant, described as it streamed (its events are not kept to be read again). */
  llm?: LlmMeaning | undefined;
  /** Notes known only once the answer is done (what a fault let through), added to the record's. */
  notes?: Record<string, unknown> | undefined;
}

export interface RecordExtras {
  /** On replay tapes: how the answer was found. */
  match?: MatchInfo | undefined;
  notes?: Record<string, unknown> | undefined;
  /** A WebSocket session's first messages (the rest follow as the session goes). */
  frames?: WsFrame[] | undefined;
}

export function exchangeRecord(call: Call, answer: Answer, extras: RecordExtras = {}): NewExchange {
  // Fields set one by one on a fresh object, never spread: this runs for every exchange.
  const ex: NewExchange = {
    startedAt: call.startedAt,
    offsetMs: call.offsetMs,
    transport: call.transport,
    route: call.route,
    request: call.request,
    timing: answer.timing.ttfbMs === undefined ? { durationMs: answer.timing.durationMs } : answer.timing,
  };
  if (call.upstream !== undefined) ex.upstream = call.upstream;
  if (answer.response !== undefined) ex.response = answer.response;
  if (extras.frames !== undefined) ex.websocket = { frames: extras.frames };
  if (answer.error !== undefined) ex.error = answer.error;
  if (extras.match !== undefined) ex.match = extras.match;
  if (extras.notes !== undefined || answer.notes !== undefined)
    ex.notes = answer.notes === undefined ? extras.notes : { ...extras.notes, ...answer.notes };
  if (answer.llm !== undefined) ex.llm = answer.llm;
  if (call.requestBodyText !== undefined || answer.responseText !== undefined || answer.responseBodyText !== undefined)
    ex.wire = { requestBody: call.requestBodyText, response: answer.responseText, responseBody: answer.responseBodyText };
  return ex;
}

/**
 * A stored record as the call, answer, extras and meaning it was made of: what `exchangeRecord` (with the meaning
 * copied, `TeeOptions.meaningOf`) makes the same record of again. For a tape written from records already made (drift's
 * refreshed tape), so that they go on it through a tee like every other record.
 */
export function recordParts(ex: Exchange): {
  call: Call;
  answer: Answer;
  extras: RecordExtras;
  meaning: Pick<Exchange, 'llm' | 'mcp'>;
} {
  const call: Call = {
    transport: ex.transport,
    route: ex.route,
    upstream: ex.upstream,
    startedAt: ex.startedAt,
    offsetMs: ex.offsetMs,
    t0: 0,
    request: ex.request,
  };
  const answer: Answer = { response: ex.response, error: ex.error, timing: ex.timing };
  const extras: RecordExtras = { match: ex.match, notes: ex.notes, frames: ex.websocket?.frames };
  const meaning: Pick<Exchange, 'llm' | 'mcp'> = {};
  if (ex.llm !== undefined) meaning.llm = ex.llm;
  if (ex.mcp !== undefined) meaning.mcp = ex.mcp;
  return { call, answer, extras, meaning };
}
