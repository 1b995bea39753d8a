/**
 * A session as steps: the session exchange itself, then one LLM call per response its adapter reads in it (each a
 * view built from the session, never written to the tape), so show, the timeline, debrief, diff, cost and the viewer
 * treat a Realtime or Live response like any LLM call. A session of a plain WebSocket API stays one exchange.
 */
import type { Exchange, MatchInfo } from '../../tape/schema.js';
import { isObj } from '../json.js';
import { detectSession } from './detect.js';

/** `ex` alone, or for a session its responses after it (ids `<session>.1`, `<session>.2`, ...). */
export function sessionSteps(ex: Exchange): Exchange[] {
  if (ex.websocket === undefined) return [ex];
  const api = detectSession(ex.route, ex.request.path, ex.upstream);
  if (api === undefined) return [ex];
  let responses;
  try {
    responses = api.reader.responses(api.provider, ex.request, ex.websocket.frames);
  } catch {
    return [ex];
  }
  const out: Exchange[] = [ex];
  const calls = Array.isArray(ex.notes?.calls) ? (ex.notes.calls as unknown[]) : undefined;
  responses.forEach((r, i) => {
    const n = i + 1;
    const step: Exchange = {
      type: 'exchange',
      id: `${ex.id}.${n}`,
      seq: ex.seq,
      startedAt: new Date(Date.parse(ex.startedAt) + r.startMs).toISOString(),
      offsetMs: ex.offsetMs + r.startMs,
      transport: 'websocket',
      route: ex.route,
      ...(ex.upstream !== undefined ? { upstream: ex.upstream } : {}),
      request: {
        method: 'GET',
        path: ex.request.path,
        query: ex.request.query,
        headers: ex.request.headers,
        body: { kind: 'json', json: r.body },
      },
      timing: { durationMs: Math.max(0, r.endMs - r.startMs) },
      llm: r.llm,
      notes: { ...ex.notes, session: ex.id, response: n },
    };
    if (ex.response !== undefined) step.response = { status: ex.response.status, headers: {} };
    if (!r.complete)
      step.error = ex.error ?? { code: 'RESPONSE_CUT', message: 'the session ended before this response did', phase: 'stream' };
    // A session replayed one call at a time says how each call was matched (`replay/session-calls.ts`).
    const own = calls?.[i];
    if (isObj(own) && typeof own.kind === 'string') step.match = own as MatchInfo;
    else if (ex.match !== undefined)
      step.match = { ...ex.match, ...(ex.match.source !== undefined ? { source: `${ex.match.source}.${n}` } : {}) };
    out.push(step);
  });
  return out;
}

/** Whether an exchange is one of a session's responses (a step read from its messages, not a record of the tape). */
export function isSessionResponse(ex: Exchange): boolean {
  return ex.transport === 'websocket' && ex.websocket === undefined && ex.notes?.session !== undefined;
}
