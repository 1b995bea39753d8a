/**
 * A session refused at its upgrade (a miss, or a rule's answer in its place): the answer is an HTTP error on the raw
 * socket, in the API's shape, and its record goes on the tape through the session's tee before the client has it.
 */
import { TapedeckError } from '../../errors.js';
import { httpError, type ErrorAnswer } from '../../providers/errors.js';
import type { ApiId } from '../../providers/types.js';
import { refuseRaw } from '../../http/raw-answer.js';
import type { Decided, Injected } from '../../engine/settle.js';
import { elapsedSince } from '../../engine/call.js';
import type { WsUpgrade } from './types.js';
import type { WsDecision } from './ws-settle.js';

/** Commit the refusal's record, then answer the client with it (cut when the tape could not take it). */
export function refuseSession(up: WsUpgrade, session: Decided<WsDecision>, answer: ErrorAnswer): Promise<boolean> {
  const response = { status: answer.status, headers: answer.headers, body: { kind: 'json' as const, json: answer.body } };
  return session.tee.finish(
    { response, timing: { durationMs: elapsedSince(session.call) } },
    { end: () => refuseRaw(up.socket, answer), cut: () => up.socket.destroy() },
  );
}

/** A rule's answer in a session's place: its status (a reset: 502), in the API's shape. */
export function injectedAnswer(fault: Injected, api: ApiId | undefined): ErrorAnswer {
  const err = new TapedeckError('UPSTREAM_ERROR', fault.message ?? `injected by fault rule ${fault.rule}`, {
    status: fault.status ?? 502,
    headers: fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) },
  });
  return httpError(err, api);
}
