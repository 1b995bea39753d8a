/**
 * OpenAI Responses over WebSocket (`wss://api.openai.com/v1/responses`, the Node SDK's `ResponsesWS`, the Python
 * SDK's `client.responses.connect()`): the client sends `response.create` messages (a Responses request body with
 * `type` beside it); the server answers each with the Responses stream events an HTTP streamed call would carry
 * (`response.created` ... `response.completed` / `response.incomplete` / `response.failed`), or with an `error`
 * event. One response runs at a time on a connection. Each `response.create` and the events up to its end are one
 * Responses call, read by the HTTP Responses adapter (`openai/openai-responses.ts`): request side from the body,
 * answer folded event by event. Replay matches each `response.create` like an HTTP Responses call
 * (`replay/session-responses.ts`), using `frames` to serve the recorded events.
 */
import { frameJson } from '../../tape/frame.js';
import type { RequestRecord, WsFrame } from '../../tape/schema.js';
import { newAnswer } from '../answer.js';
import { isObj, str } from '../json.js';
import { requestSideOf, withAnswer } from '../llm-meaning.js';
import { openaiProvider } from '../openai/openai.js';
import { openaiResponses } from '../openai/openai-responses.js';
import type { Answer, Json, LlmProvider, ProviderAdapter, SessionReader, SessionResponse } from '../types.js';

/** The server events that end a response (an `error` ends the request it answers, started or not). */
const ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/** The client message that asks for a response. */
export const RESPONSE_CREATE = 'response.create';

/** A `response.create` message as the Responses request body it carries (everything but `type`). */
export function responseBody(message: Json): Json {
  const { type: _type, ...body } = message;
  return body;
}

/** A replay miss as the Responses WebSocket API reports a refused request: an `error` event with the error object. */
export function responsesMissEvent(message: string): Json {
  return {
    type: 'error',
    status: 400,
    error: { type: 'invalid_request_error', code: 'tapedeck_miss', message, param: null },
  };
}

const session: SessionReader = {
  detect: (target) => (target.method === 'GET' && /\/responses$/.test(target.path) ? openaiProvider(target) : undefined),
  // Per-run identifiers when a session is played message by message (`replay/session-pool.ts`).
  idKeys: ['event_id', 'id', 'item_id', 'call_id', 'response_id', 'previous_response_id'],
  missEvent: (message) => responsesMissEvent(message),
  responses: (provider, request, frames) => readResponses(provider, request, frames),
  // Modified replay (`--llm live --model M`): each `response.create` as an HTTP Responses body is changed.
  overrideMessage(json, o) {
    if (json.type !== RESPONSE_CREATE) return { json, applied: {} };
    const out = openaiResponses.applyOverrides({ ...json }, '', o, 'openai');
    return { json: out.body, applied: out.applied };
  },
  callOf: (message) => (isObj(message) && message.type === RESPONSE_CREATE ? responseBody(message) : undefined),
};

interface Open {
  startMs: number;
  lastMs: number;
  first: number;
  last: number;
  body: Json;
  answer: Answer;
}

function readResponses(provider: LlmProvider, request: RequestRecord, frames: readonly WsFrame[]): SessionResponse[] {
  const out: SessionResponse[] = [];
  let open: Open | undefined;
  const finish = (complete: boolean): void => {
    if (open === undefined) return;
    const side = requestSideOf(provider, openaiResponses, open.body, request.path);
    // Every answer on a WebSocket comes as events, whatever `stream` says.
    const llm = withAnswer({ ...side, streamed: true }, open.answer);
    out.push({ startMs: open.startMs, endMs: open.lastMs, body: open.body, llm, complete, frames: [open.first, open.last] });
    open = undefined;
  };
  frames.forEach((f, i) => {
    const ev = frameJson(f);
    if (!isObj(ev)) return;
    const type = str(ev.type) ?? '';
    if (f.from === 'client') {
      if (type !== RESPONSE_CREATE) return;
      finish(false);
      open = { startMs: f.offsetMs, lastMs: f.offsetMs, first: i, last: i, body: responseBody(ev), answer: newAnswer() };
      return;
    }
    if (open === undefined) return;
    open.lastMs = f.offsetMs;
    open.last = i;
    openaiResponses.describeEvent(open.answer, ev, { offsetMs: f.offsetMs, data: '', event: type });
    if (ENDS.has(type)) finish(true);
  });
  finish(false);
  return out;
}

/**
 * The Responses API with its WebSocket sessions: the HTTP adapter (detection, request and stream reading, matching
 * views, overrides) with `session`, so one adapter reads a Responses call over HTTP and over a WebSocket.
 */
export const openaiResponsesWithSessions: ProviderAdapter = { ...openaiResponses, session };
