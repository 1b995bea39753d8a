/**
 * Sessions whose API asks for one call per client message (the Responses API over WebSocket: `response.create`):
 * each such message is matched like an HTTP call of that API, against every call recorded in the sessions at the
 * same place (exact key first, then the semantic stages; the Nth identical request gets the Nth answer), and answered
 * with the server messages the recording sent for that call. A client that asks in another order, or asks another
 * question, gets each question's own answer or a miss, never the next recorded messages. The calls are the session
 * reader's responses (`SessionReader.responses` with `frames`), as `show` lists them (`providers/sessions/expand.ts`).
 */
import { requestSideOf } from '../providers/llm-meaning.js';
import { sessionSteps } from '../providers/sessions/expand.js';
import type { SessionApi } from '../providers/sessions/detect.js';
import { isObj } from '../providers/json.js';
import { frameJson } from '../tape/frame.js';
import type { Exchange, MatchInfo, WsFrame } from '../tape/schema.js';
import { roundMs } from '../tape/timing.js';
import type { IncomingRequest, Matcher } from './matcher.js';

/** One recorded call: its step (what the matcher keys), the client message that asked, the server messages that answered. */
interface RecordedCall {
  step: Exchange;
  ask: WsFrame;
  replies: WsFrame[];
}

/** The recorded calls of some sessions, and the matcher over them. */
export interface SessionCalls {
  readonly matcher: Matcher;
  readonly byStep: ReadonlyMap<string, RecordedCall>;
}

/** Build a matcher over the calls recorded in `sessions` (complete ones: a call cut short is not served). */
export function recordedCalls(
  sessions: readonly Exchange[],
  api: SessionApi,
  matcherOf: (steps: readonly Exchange[]) => Matcher,
): SessionCalls {
  const byStep = new Map<string, RecordedCall>();
  const steps: Exchange[] = [];
  for (const ex of sessions) {
    const frames = ex.websocket?.frames ?? [];
    let responses;
    try {
      responses = api.reader.responses(api.provider, ex.request, frames);
    } catch {
      continue;
    }
    const views = sessionSteps(ex).slice(1);
    if (views.length !== responses.length) continue;
    responses.forEach((r, i) => {
      const step = views[i] as Exchange;
      if (!r.complete || r.frames === undefined || step.error !== undefined) return;
      const [first, last] = r.frames;
      const ask = frames[first] as WsFrame;
      const replies = frames.slice(first + 1, last + 1).filter((f) => f.from === 'server' && f.kind !== 'close');
      byStep.set(step.id, { step, ask, replies });
      steps.push(step);
    });
  }
  return { matcher: matcherOf(steps), byStep };
}

export type CallOutcome =
  | { kind: 'match'; ask: WsFrame; replies: WsFrame[]; match: MatchInfo }
  /** `match`: undefined for a message that asks for no call (it is no step of the session). */
  | { kind: 'miss'; reason: string; match?: MatchInfo; closest?: { id: string; difference: string } };

/**
 * A client message of a live session: the recorded call it asks for, or why none answers it. `place` is where the
 * session connected (route, path, query), as the recorded steps carry it.
 */
export async function matchCall(
  calls: SessionCalls,
  api: SessionApi,
  place: Pick<Exchange['request'], 'path' | 'query'> & { route: string },
  frame: WsFrame,
): Promise<CallOutcome> {
  const json = frameJson(frame);
  const body = api.reader.callOf?.(json);
  if (body === undefined) {
    const what = isObj(json) && typeof json.type === 'string' ? `a ${json.type} message` : `a ${frame.kind} message`;
    const reason = `${what} asks for no response, and this API's recorded messages are matched one response at a time`;
    return { kind: 'miss', reason };
  }
  const incoming: IncomingRequest = {
    route: place.route,
    request: { method: 'GET', path: place.path, query: place.query, body: { kind: 'json', json: body } },
    transport: 'websocket',
    llm: { ...requestSideOf(api.provider, api.adapter, body, place.path), streamed: true },
  };
  const outcome = await calls.matcher.match(incoming);
  if (outcome.kind === 'miss') {
    const best = outcome.candidates[0];
    const difference = best?.differences.slice(0, 2).join('; ');
    const reason = `no recorded response matches this ${String(isObj(json) ? json.type : 'message')}: ${outcome.explanation}${
      best !== undefined ? `; closest #${best.exchange.id}${difference ? `: ${difference}` : ''}` : ''
    }`;
    return {
      kind: 'miss',
      reason,
      match: { kind: 'miss', stage: 'session-call', reason },
      ...(best !== undefined ? { closest: { id: best.exchange.id, difference: difference ?? '' } } : {}),
    };
  }
  const call = calls.byStep.get(outcome.exchange.id) as RecordedCall;
  return {
    kind: 'match',
    ask: call.ask,
    replies: call.replies,
    match: {
      kind: outcome.kind,
      source: outcome.exchange.id,
      stage: outcome.stage,
      score: roundMs(outcome.score),
      reason: outcome.explanation,
    },
  };
}
