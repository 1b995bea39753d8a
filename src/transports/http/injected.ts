/**
 * A fault's answer in HTTP's framing (`--faults`): an injected status is the provider's own error (status, body and
 * headers, so an official SDK reads it and retries it, or not, as it would the real API's: `engine/faults/
 * fault-answers.ts`), a reset is the connection closed before any byte. The settle picked the fault and marks the
 * record as injected (`match.kind: "fault"`); this only frames it.
 */
import { elapsedSince, type Call } from '../../engine/call.js';
import type { Injected } from '../../engine/decision.js';
import type { Answer } from '../../engine/record.js';
import { faultStatusAnswer } from '../../engine/faults/fault-answers.js';
import type { ResponderAnswer } from '../../http/types.js';
import type { ApiId } from '../../providers/types.js';

export type InjectedHttp = { reset: true; answer: Answer } | { reset: false; made: ResponderAnswer; answer: Answer };

/** What a call of `api` gets for an injected fault, and the record the tape keeps of it. */
export function injectedAnswer(fault: Injected, api: ApiId | undefined, call: Call): InjectedHttp {
  if (fault.status === undefined) {
    const error = { code: 'FAULT_RESET', message: `connection reset by fault rule ${fault.rule}`, phase: 'connect' as const };
    return { reset: true, answer: { error, timing: { durationMs: elapsedSince(call) } } };
  }
  const answer = faultStatusAnswer(fault, api);
  return {
    reset: false,
    made: { status: answer.status, headers: answer.headers, json: answer.body },
    answer: {
      response: { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } },
      timing: { durationMs: elapsedSince(call) },
    },
  };
}
